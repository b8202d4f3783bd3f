#!/usr/bin/env bash
# A large corpus from text a Debian package ships, the same bytes every
# time: the C files of Debian 12's kernel source (linux-source-6.1, a
# 139 MB package; `apt-get download` only, nothing is installed), in the
# order of its tarball, whole lines up to SIZE_MB megabytes, prepared with
# the byte tokenizer and 1% of it kept for validation. The package's
# version and the text's SHA-256 are printed: a Debian point release that
# updates the package changes them.
#   bash scripts/large_corpus.sh OUTDIR [SIZE_MB]     # default 128 (about a minute)
# Writes OUTDIR/kernel-c.txt and OUTDIR/kernel-c/ (train.bin, val.bin, tokenizer.json).
# TAPEGPT=/path/to/tapegpt uses that binary (default: build/tapegpt, built).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench_lib.sh
export LC_ALL=C

case "${1:-}" in
  -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") echo "large_corpus.sh: give the output directory (see bash scripts/large_corpus.sh --help)" >&2; exit 2 ;;
esac
out="$1"
size_mb="${2:-128}"
[[ "$size_mb" =~ ^[1-9][0-9]*$ ]] || { echo "large_corpus.sh: SIZE_MB must be a whole number of megabytes (got '$size_mb')" >&2; exit 2; }
bench_use_tapegpt
mkdir -p "$out"
download="$(mktemp -d)"
trap 'rm -rf "$download"' EXIT
(cd "$download" && apt-get download linux-source-6.1 >/dev/null 2>&1) ||
  { echo "large_corpus.sh: 'apt-get download linux-source-6.1' failed; run 'apt-get update' first (needs the Debian registry)" >&2; exit 1; }
deb="$(ls "$download"/linux-source-6.1_*.deb)"
# awk reads to the end (an early exit would SIGPIPE the pipeline).
dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards '*.tar.xz' | xz -dc | tar -xO --wildcards '*.c' |
  awk -v limit="$((size_mb * 1000000))" '!full { n += length($0) + 1; if (n > limit) full = 1; else print }' \
  > "$out/kernel-c.txt"
echo "kernel-c: $(basename "$deb"), $(wc -c < "$out/kernel-c.txt") bytes, sha256 $(sha256sum "$out/kernel-c.txt" | cut -c1-16)"
"$TAPEGPT" prepare --input "$out/kernel-c.txt" --tokenizer byte --val-fraction 0.01 --out "$out/kernel-c" | tail -3
