#!/usr/bin/env bash
# Builds tapegpt with AddressSanitizer + UndefinedBehaviorSanitizer
# (-DTAPEGPT_SANITIZE=ON, RelWithDebInfo) in its own build directory and runs
# the whole CTest suite there. Extra arguments go to ctest, e.g. -R kill.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build-asan}"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTAPEGPT_SANITIZE=ON >/dev/null
nice -n 19 cmake --build "$BUILD_DIR" -j"$(nproc)"
# Leaks count, except HDF5's own on corrupt files (checkpoints/README.md):
# tests/robustness/lsan.supp. UBSan already aborts (-fno-sanitize-recover).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:allocator_may_return_null=1:strict_string_checks=1:detect_stack_use_after_return=1:fast_unwind_on_malloc=0}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tests/robustness/lsan.supp:print_suppressions=0}"
# Open MPI's own leaks at MPI_Finalize (tests/distributed/) come from code
# without frame pointers: the slow unwinder (fast_unwind_on_malloc=0 above)
# and plugins kept loaded give their stacks the library names lsan.supp
# suppresses.
export OMPI_MCA_mca_base_component_disable_dlclose=1
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
nice -n 19 ctest --test-dir "$BUILD_DIR" --output-on-failure --timeout 1800 "$@"
