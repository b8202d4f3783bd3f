#!/usr/bin/env bash
# scripts/bench.sh on a machine that has none of tapegpt's Debian packages
# and no network (a lent machine with AMX, say), in two halves:
#   bash scripts/bench_elsewhere.sh bundle DIR   # here: DIR/tapegpt-bundle.tar.xz, build/tapegpt
#                                                # (Release) and every library it loads but glibc's
#   bash scripts/bench_elsewhere.sh run DIR [bench.sh's arguments]   # there, from a copy of the
#                                                # repository holding DIR: unpacks, then runs
#                                                # bench.sh on 2 threads (cores 0 and 1)
# The bundled binary finds its libraries through an RPATH ($ORIGIN/blas,
# $ORIGIN/lib, set with patchelf), so nothing is installed there and no
# LD_LIBRARY_PATH leaks into the PyTorch peer; OpenBLAS sits alone in blas/,
# the directory bench.sh hands to PyTorch. PYTHON picks the Python with
# PyTorch there (default: the first of /opt/torch/.venv/bin/python3 and
# python3 that imports torch): its own BLAS and oneDNN, unlike Debian's
# python3-torch, so the summary's fairness line says which files each side
# loaded. The bundle is about 22 MB. The build is -march=native: the other
# machine needs this one's instruction sets (a Zen 4 build runs on Sapphire
# Rapids, which has every AVX-512 subset Zen 4 has).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench_lib.sh

usage() { sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; }
case "${1:-}" in
  bundle|run) ;;
  -h|--help) usage; exit 0 ;;
  *) echo "bench_elsewhere.sh: give 'bundle DIR' or 'run DIR' (see bash scripts/bench_elsewhere.sh --help)" >&2; exit 2 ;;
esac
verb="$1"
dir="${2:?bench_elsewhere.sh: $verb needs a directory}"
shift 2

if [[ "$verb" == bundle ]]; then
  if ! command -v patchelf >/dev/null; then
    sudo=""; [[ "$(id -u)" != 0 ]] && sudo="sudo"
    $sudo apt-get update -qq && $sudo apt-get install -y -qq patchelf >/dev/null
  fi
  bench_use_tapegpt
  stage="$(mktemp -d)"
  trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage/bin/lib" "$stage/bin/blas" "$dir"
  cp "$TAPEGPT" "$stage/bin/tapegpt"
  # glibc's own libraries stay behind: the other machine's are newer.
  for lib in $(ldd "$TAPEGPT" | awk '$3 ~ /^\// {print $3}'); do
    case "$(basename "$lib")" in
      libc.so.*|libm.so.*|libresolv.so.*|libpthread.so.*|libdl.so.*|librt.so.*) ;;
      libopenblas.so.*) cp -L "$lib" "$stage/bin/blas/" ;;
      *) cp -L "$lib" "$stage/bin/lib/" ;;
    esac
  done
  # DT_RPATH, not RUNPATH: it also serves the libraries' own dependencies.
  patchelf --force-rpath --set-rpath '$ORIGIN/blas:$ORIGIN/lib' "$stage/bin/tapegpt"
  for f in "$stage"/bin/lib/* "$stage"/bin/blas/*; do patchelf --force-rpath --set-rpath '$ORIGIN:$ORIGIN/../lib' "$f"; done
  if ldd "$stage/bin/tapegpt" | grep -q 'not found'; then
    echo "bench_elsewhere.sh: the bundled binary misses a library:" >&2
    ldd "$stage/bin/tapegpt" | grep 'not found' >&2
    exit 1
  fi
  tar -C "$stage" -cJf "$dir/tapegpt-bundle.tar.xz" bin
  echo "bundle: $dir/tapegpt-bundle.tar.xz ($(du -h "$dir/tapegpt-bundle.tar.xz" | cut -f1)) of $TAPEGPT at $(bench_commit)"
  exit 0
fi

[[ -f "$dir/tapegpt-bundle.tar.xz" ]] || { echo "bench_elsewhere.sh: no $dir/tapegpt-bundle.tar.xz: make it with 'bundle $dir' first" >&2; exit 2; }
unpacked="$(mktemp -d)"
tar -C "$unpacked" -xJf "$dir/tapegpt-bundle.tar.xz"
if ldd "$unpacked/bin/tapegpt" | grep -q 'not found'; then
  echo "bench_elsewhere.sh: the bundled binary misses a library here:" >&2
  ldd "$unpacked/bin/tapegpt" | grep 'not found' >&2
  exit 1
fi
if [[ -z "${PYTHON:-}" ]]; then
  for py in /opt/torch/.venv/bin/python3 python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null && "$py" -c 'import torch' 2>/dev/null; then PYTHON="$(command -v "$py")"; break; fi
  done
fi
echo "cpu: $(bench_cpu_model); $(grep -o -w -E 'amx_bf16|avx512_bf16' /proc/cpuinfo | sort -u | xargs echo) ; python: ${PYTHON:-none with torch}"
TAPEGPT="$unpacked/bin/tapegpt" PYTHON="${PYTHON:-/usr/bin/python3}" THREADS="${THREADS:-2}" \
  taskset -c 0,1 bash scripts/bench.sh "$@"
