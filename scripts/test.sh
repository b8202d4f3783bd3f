#!/usr/bin/env bash
# Sets everything up and runs the whole test suite: installs the Debian
# packages (PyTorch and h5py included, for the parity and interoperability
# checks), builds in build/, and runs every test through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
# No test may skip (below), and some need root: say so now, not after the build.
if [[ "$(id -u)" != 0 ]]; then
  echo "test.sh: run it as root (sudo bash scripts/test.sh): the network-namespace tests (tests/distributed)" \
    "and the disk-full tests (tests/robustness) need root, and here no test may skip" >&2
  exit 1
fi
TAPEGPT_WITH_TORCH="${TAPEGPT_WITH_TORCH:-1}" scripts/setup.sh
scripts/build.sh
# Every tool the tests use was just installed, so no test may skip: under
# this variable a test that would skip fails instead (tests/support/no_skip.*).
export TAPEGPT_NO_SKIP=1
log=build/ctest-output.txt
status=0
ctest --test-dir build --output-on-failure --timeout 600 2>&1 | tee "$log" || status=$?
if (( status == 0 )) && grep -qE '\*\*\*Skipped|Not Run|did not run' "$log"; then
  echo "test.sh: CTest skipped a test (see $log): every test must run here" >&2
  exit 1
fi
exit "$status"
