#!/usr/bin/env bash
# The corpora of scripts/bench_budget.sh, prepared with `tapegpt prepare`
# from files this machine's Debian packages give (nothing is downloaded).
# Each is built the same way every time: file lists sorted in the C locale,
# whole lines up to a fixed size, so the same packages give the same bytes
# (the SHA-256 of each text is printed to show it).
#   shakespeare-char   data/tinyshakespeare.txt, char tokenizer (1.1 MB)
#   shakespeare-gpt2   the same text, GPT-2's tokenizer
#   python-bytes       Python 3.11's standard library (/usr/lib/python3.11/*.py), byte tokenizer (2 MB)
#   fortunes-bpe       English quotes and prose of the Debian package fortunes
#                      (/usr/share/games/fortunes, overstrike removed), trained BPE of 1024 tokens (2 MB)
#   c-headers-bytes    C headers of libc6-dev (/usr/include), byte tokenizer (2 MB): the
#                      held-out corpus, looked at only at the end (bench_budget.sh --held-out)
# Takes a few seconds.
#   bash scripts/budget_corpora.sh OUTDIR                          # all five
#   bash scripts/budget_corpora.sh OUTDIR shakespeare-char python-bytes
# Writes OUTDIR/NAME.txt (the text) and OUTDIR/NAME/ (train.bin, val.bin,
# tokenizer.json), replacing earlier ones, and prints each corpus's sizes.
# TAPEGPT=/path/to/tapegpt uses that binary (default: build/tapegpt, built).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench_lib.sh

ALL_CORPORA=(shakespeare-char shakespeare-gpt2 python-bytes fortunes-bpe c-headers-bytes)
SIZE_LIMIT=2000000  # bytes of text per corpus (Tiny Shakespeare is 1,115,394)
export LC_ALL=C     # byte order for sort, bytes for awk and sed

case "${1:-}" in
  -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") echo "budget_corpora.sh: give the output directory (see bash scripts/budget_corpora.sh --help)" >&2; exit 2 ;;
esac
out="$1"
shift
names=("$@")
(( ${#names[@]} )) || names=("${ALL_CORPORA[@]}")
for name in "${names[@]}"; do
  [[ " ${ALL_CORPORA[*]} " == *" $name "* ]] ||
    { echo "budget_corpora.sh: unknown corpus '$name'; the corpora are: ${ALL_CORPORA[*]}" >&2; exit 2; }
done

need_dir() {
  [[ -d "$1" ]] || { echo "budget_corpora.sh: $1 is missing; $2" >&2; exit 1; }
}

# Reads the files named on stdin (one a line) in order and prints whole
# lines of them, at most $SIZE_LIMIT bytes in all. awk reads to the end: an
# early exit would kill cat with SIGPIPE, which pipefail turns into failure.
first_bytes() {
  tr '\n' '\0' | xargs -0 cat |
    awk -v limit="$SIZE_LIMIT" '!full { n += length($0) + 1; if (n > limit) full = 1; else print }'
}

# The text of corpus $1 on stdout.
corpus_text() {
  case "$1" in
    shakespeare-char|shakespeare-gpt2) cat data/tinyshakespeare.txt ;;
    python-bytes)
      need_dir /usr/lib/python3.11 "install python3.11 (Debian 12's python3)"
      find /usr/lib/python3.11 -maxdepth 1 -name '*.py' -type f | sort | first_bytes ;;
    fortunes-bpe)
      need_dir /usr/share/games/fortunes "install the Debian package fortunes (scripts/setup.sh does)"
      # The fortune files: no .dat index, no .u8 link, no pictures (art,
      # ascii-art). "c\bc", "_\bc" and "___\b\b\bword" are printed bold and
      # underlined by overstriking: keep the letters; drop the bells (^G).
      # A "%" line ends a fortune: a blank line.
      find /usr/share/games/fortunes -maxdepth 1 -type f ! -name '*.*' ! -name art ! -name ascii-art | sort |
        first_bytes | sed -e 's/_\+\x08\+//g' -e 's/.\x08//g' -e 's/\x07//g' -e 's/^%$//' ;;
    c-headers-bytes)
      # libc6-dev's headers, not whatever else /usr/include holds on this machine.
      dpkg-query -L libc6-dev >/dev/null 2>&1 || { echo "budget_corpora.sh: install libc6-dev" >&2; exit 1; }
      dpkg-query -L libc6-dev | grep '^/usr/include/.*\.h$' | while read -r f; do [[ -f "$f" && ! -L "$f" ]] && echo "$f"; done |
        sort | first_bytes ;;
  esac
}

tokenizer_flags() {
  case "$1" in
    shakespeare-char) echo "--tokenizer char" ;;
    shakespeare-gpt2) echo "--tokenizer gpt2" ;;
    python-bytes|c-headers-bytes) echo "--tokenizer byte" ;;
    fortunes-bpe) echo "--tokenizer bpe --vocab-size 1024" ;;
  esac
}

# The token count in a token file's header (Note [Token file format] in data/token_file.h).
token_count() { od -An -t u8 -j 16 -N 8 "$1" | tr -d ' '; }
vocab_size() { od -An -t u4 -j 24 -N 4 "$1" | tr -d ' '; }

bench_use_tapegpt
mkdir -p "$out"
printf '%-18s %10s %10s %10s %6s  %s\n' corpus "text B" "train tok" "val tok" vocab "sha256 of the text (first 16)"
for name in "${names[@]}"; do
  text="$out/$name.txt"
  corpus_text "$name" > "$text"
  [[ -s "$text" ]] || { echo "budget_corpora.sh: $name came out empty" >&2; exit 1; }
  # Plain text only: valid UTF-8, no control characters but tab, newline
  # and form feed (C headers and Python sources hold a few of those).
  if ! iconv -f UTF-8 -t UTF-8 "$text" >/dev/null 2>&1; then
    echo "budget_corpora.sh: $text is not valid UTF-8" >&2; exit 1
  fi
  if grep -qP '[\x00-\x08\x0b\x0d-\x1f\x7f]' "$text"; then
    echo "budget_corpora.sh: $text holds control characters: $(grep -naP '[\x00-\x08\x0b\x0d-\x1f\x7f]' "$text" | head -1 | cut -c1-60)" >&2
    exit 1
  fi
  [[ ! -e "$out/$name" || -f "$out/$name/tokenizer.json" ]] ||
    { echo "budget_corpora.sh: $out/$name exists and is not a prepared corpus; move it away" >&2; exit 1; }
  rm -rf "${out:?}/$name"
  read -r -a flags <<< "$(tokenizer_flags "$name")"
  "$TAPEGPT" prepare --input "$text" "${flags[@]}" --out "$out/$name" --threads 1 >/dev/null
  printf '%-18s %10s %10s %10s %6s  %s\n' "$name" "$(stat -c %s "$text")" "$(token_count "$out/$name/train.bin")" \
    "$(token_count "$out/$name/val.bin")" "$(vocab_size "$out/$name/val.bin")" "$(sha256sum "$text" | cut -c1-16)"
done
