#!/usr/bin/env bash
# Installs everything tapegpt needs from Debian 12 packages. Idempotent: a
# second run installs nothing new. Runs as root, or through sudo otherwise.
set -euo pipefail

# zlib, liblzma and libzstd let prepare read gzip, xz and zstd corpora.
# The OpenMP build of OpenBLAS shares gcc's OpenMP thread pool with our own
# kernels, so BLAS threads and kernel threads never fight over the cores.
PACKAGES=(
  build-essential cmake pkg-config
  libopenblas-openmp-dev libopenblas-dev
  libhdf5-dev hdf5-tools
  libcxxopts-dev catch2
  libpcre2-dev nlohmann-json3-dev
  mount  # mount/umount: the tmpfs disk-full tests (unshare is in essential util-linux)
  python3 procps  # the CTest scripts' /usr/bin/python3; pgrep (tests/distributed/test_faults.py)
  zlib1g-dev liblzma-dev libzstd-dev
  libopenmpi-dev openmpi-bin  # mpirun -np N tapegpt train: data parallelism (tests/distributed)
  libdnnl-dev  # oneDNN: the bf16 matmuls (autograd/kernels/bf16.h), AVX512_BF16 or AMX where the CPU has it
  iproute2  # ip netns, veth, tc tbf: ranks on test hosts of their own (tests/distributed/netns.py)
  fortunes  # English quotes and prose: a corpus of scripts/budget_corpora.sh (bench_budget.sh, its CTest)
)
# Optional cross-check tools (PyTorch parity, h5py round trips): only with
# TAPEGPT_WITH_TORCH=1, since they are large and the core needs none of them.
if [[ "${TAPEGPT_WITH_TORCH:-0}" == 1 ]]; then
  PACKAGES+=(python3-torch python3-h5py python3-numpy)
  # The attention page's tests: xmllint checks every SVG is well-formed XML,
  # headless Chromium renders index.html (tests/train/test_attention_*.py).
  PACKAGES+=(libxml2-utils chromium)
  # debootstrap makes the Debian forky folder of the real-client tests
  # (scripts/setup_forky.sh, below).
  PACKAGES+=(debootstrap)
fi
# scripts/bench_mpi.sh times a bare MPI all-reduce of the gradients' size
# with mpi4py (MPI's own rate over a test link): only with TAPEGPT_WITH_BENCH=1.
if [[ "${TAPEGPT_WITH_BENCH:-0}" == 1 ]]; then
  PACKAGES+=(python3-mpi4py python3-numpy)
fi
# Fuzzing and ThreadSanitizer builds (scripts/fuzz.sh, scripts/tsan.sh) use
# clang with its runtime and OpenMP library: only with TAPEGPT_WITH_CLANG=1.
if [[ "${TAPEGPT_WITH_CLANG:-0}" == 1 ]]; then
  PACKAGES+=(clang libclang-rt-14-dev libomp-14-dev)
fi

SUDO=""
if [[ "$(id -u)" != 0 ]]; then SUDO="sudo"; fi

updated=0
install() {
  if (( !updated )); then $SUDO apt-get update -q; updated=1; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 "$@"
}
missing_of() {
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      echo "$p"
    fi
  done
}

missing=($(missing_of "${PACKAGES[@]}"))
if (( ${#missing[@]} )); then
  echo "setup: installing ${missing[*]}"
  install "${missing[@]}"
else
  echo "setup: all packages present"
fi

# Debian's other two OpenBLAS builds, only so tests/train/test_blas_builds.py
# can run tapegpt against each (tapegpt itself links the OpenMP build through
# its RUNPATH). Installing them makes the alternatives system switch the
# machine's libopenblas.so.0 / libblas.so.3 to the pthread build (priority
# 100 against 95), which would change every other program's BLAS (numpy,
# PyTorch in scripts/bench.sh); so each link is put back where it was.
BLAS_BUILDS=(libopenblas0-pthread libopenblas0-serial)
missing=($(missing_of "${BLAS_BUILDS[@]}"))
if (( ${#missing[@]} )); then
  links=(libopenblas.so.0-x86_64-linux-gnu libblas.so.3-x86_64-linux-gnu liblapack.so.3-x86_64-linux-gnu)
  declare -A before=()
  for l in "${links[@]}"; do
    before[$l]="$(readlink "/etc/alternatives/$l" 2>/dev/null || true)"
  done
  echo "setup: installing ${missing[*]}"
  install "${missing[@]}"
  for l in "${links[@]}"; do
    if [[ -n "${before[$l]}" && "$(readlink "/etc/alternatives/$l")" != "${before[$l]}" ]]; then
      $SUDO update-alternatives --quiet --set "$l" "${before[$l]}"
    fi
  done
fi

# The real clients tests/export checks `tapegpt export`'s files with (forky's
# transformers and PyTorch, Debian's llama.cpp tools, and node-llama-cpp run
# by forky's Node.js >= 20, which Debian 12 lacks): a Debian forky folder
# made once per machine (about 2.2 GB, 10 to 20 minutes; skipped when
# present and complete), then node-llama-cpp 3.21.1 into .node/ with forky's
# npm (scripts/setup_forky.sh). With the tests' tools only
# (TAPEGPT_WITH_TORCH=1, as scripts/test.sh sets).
if [[ "${TAPEGPT_WITH_TORCH:-0}" == 1 ]]; then
  $SUDO env TAPEGPT_FORKY="${TAPEGPT_FORKY:-/var/cache/tapegpt/forky}" "$(dirname "$0")/setup_forky.sh"
fi
