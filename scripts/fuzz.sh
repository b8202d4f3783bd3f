#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and fuzzes one or all of
# them for SECONDS each:  scripts/fuzz.sh TARGET|all SECONDS [libFuzzer flags]
# Targets: checkpoint token_file tokenizer_json encode safetensors (tests/fuzz/README.md).
# The growing corpus and any crash inputs stay in $BUILD_DIR/fuzz-work/TARGET/;
# copy a crash input to tests/fuzz/regressions/TARGET/ once it is understood.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGETS=(checkpoint token_file tokenizer_json encode safetensors)
if [[ $# -lt 2 ]]; then
  echo "usage: scripts/fuzz.sh TARGET|all SECONDS [libFuzzer flags]; targets: ${TARGETS[*]}" >&2
  exit 2
fi
what="$1" seconds="$2"
shift 2
if [[ "$what" == all ]]; then selected=("${TARGETS[@]}"); else selected=("$what"); fi

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: needs clang and libFuzzer (apt-get install clang libclang-rt-14-dev libomp-14-dev)" >&2
  exit 77
fi
BUILD_DIR="${BUILD_DIR:-build-fuzz}"
# Every library is instrumented for coverage and sanitized; only the targets
# link libFuzzer's main (tests/fuzz/CMakeLists.txt). UBSan findings abort.
SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
CC=clang CXX=clang++ cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTAPEGPT_FUZZ=ON \
  -DCMAKE_C_FLAGS="$SAN" -DCMAKE_CXX_FLAGS="$SAN" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target "${selected[@]/#/fuzz_}"

# HDF5 leaks a little on corrupt object headers and may attempt one huge
# allocation before verifying a checksum (checkpoints/README.md): leaks are
# not findings, and a failed malloc must return null, not abort.
export ASAN_OPTIONS="${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0
for t in "${selected[@]}"; do
  work="$BUILD_DIR/fuzz-work/$t"
  mkdir -p "$work/corpus" "$work/artifacts"
  echo "fuzz.sh: $t for ${seconds}s (corpus $work/corpus, crashes $work/artifacts)"
  nice -n 19 "$BUILD_DIR/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -detect_leaks=0 -timeout=30 \
    -rss_limit_mb=4096 -artifact_prefix="$work/artifacts/" -print_final_stats=1 "$@" \
    "$work/corpus" "tests/fuzz/corpus/$t" || status=1
done
exit $status
