#!/usr/bin/env bash
# Builds tapegpt with ThreadSanitizer (-DTAPEGPT_TSAN=ON, RelWithDebInfo) in
# its own build directory and runs the whole CTest suite there. Extra
# arguments go to ctest, e.g. -R kernel.
#
# Why clang: gcc's libgomp is not instrumented, so TSan cannot see its
# barriers and reports every OpenMP parallel loop as a race. clang's libomp
# with the Archer tool (libarcher.so, shipped in Debian's libomp-14-dev)
# tells TSan about OpenMP's synchronisation. OpenBLAS and HDF5 are not
# instrumented; ignore_noninstrumented_modules=1 keeps their internals out.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang++ >/dev/null; then
  echo "tsan.sh: needs clang and libomp (apt-get install clang libomp-14-dev)" >&2
  exit 77
fi
BUILD_DIR="${BUILD_DIR:-build-tsan}"
CC=clang CXX=clang++ cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTAPEGPT_TSAN=ON >/dev/null
# Keep going past a target that cannot link under TSan (tests/nn's
# test_no_alloc replaces operator new, as TSan's runtime does), test the
# rest, and still fail at the end.
build_ok=1
nice -n 19 cmake --build "$BUILD_DIR" -j"$(nproc)" -- -k || build_ok=0
archer="$(ls /usr/lib/llvm-*/lib/libarcher.so 2>/dev/null | tail -1 || true)"
if [[ -n "$archer" ]]; then
  export OMP_TOOL_LIBRARIES="$archer"
else
  echo "tsan.sh: warning: libarcher.so not found; OpenMP regions may be reported as races" >&2
fi
export TSAN_OPTIONS="${TSAN_OPTIONS:-ignore_noninstrumented_modules=1 halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/robustness/tsan.supp}"
nice -n 19 ctest --test-dir "$BUILD_DIR" --output-on-failure --timeout 1800 "$@" || exit 1
if [[ $build_ok == 0 ]]; then echo "tsan.sh: some targets failed to build (above)" >&2; exit 1; fi
