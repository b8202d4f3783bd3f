#!/usr/bin/env bash
# Sets everything up and runs the whole test suite: installs the Debian
# packages (PyTorch and h5py included, for the parity and interoperability
# checks), builds in build/, and runs every test through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
# No silent skips: a test missing a tool or package fails instead.
export TAPEGPT_NO_SKIP=1
TAPEGPT_WITH_TORCH="${TAPEGPT_WITH_TORCH:-1}" scripts/setup.sh
scripts/build.sh
ctest --test-dir build --output-on-failure --timeout 600
