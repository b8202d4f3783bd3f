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
  zlib1g-dev liblzma-dev libzstd-dev
)
# Optional cross-check tools (PyTorch parity, h5py round trips): only with
# TAPEGPT_WITH_TORCH=1, since they are large and the core needs none of them.
if [[ "${TAPEGPT_WITH_TORCH:-0}" == 1 ]]; then
  PACKAGES+=(python3-torch python3-h5py python3-numpy)
fi
# Fuzzing and ThreadSanitizer builds (scripts/fuzz.sh, scripts/tsan.sh) use
# clang with its runtime and OpenMP library: only with TAPEGPT_WITH_CLANG=1.
if [[ "${TAPEGPT_WITH_CLANG:-0}" == 1 ]]; then
  PACKAGES+=(clang libclang-rt-14-dev libomp-14-dev)
fi

SUDO=""
if [[ "$(id -u)" != 0 ]]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if (( ${#missing[@]} )); then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi
