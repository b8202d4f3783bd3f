#!/usr/bin/env bash
# Makes the Debian forky folder the real-client tests run in (transformers,
# PyTorch, llama.cpp's tools and a Node.js >= 20 for node-llama-cpp), once
# per machine, then installs node-llama-cpp into the repository's .node/ with
# forky's npm. Called by scripts/setup.sh (which installs debootstrap first);
# runs as root. Debian 12 has none of these clients recent enough: forky,
# Debian's next release, has them all, from the same mirror.
#
# The folder lives at $TAPEGPT_FORKY (default /var/cache/tapegpt/forky):
# about 2.2 GB, made once in 10 to 20 minutes (17 on a busy 2-core machine:
# 4 for debootstrap, 13 for apt). A stamp written last names the package
# list; a folder without it (an interrupted run) or with another list is
# made again, not trusted. scripts/in_forky.sh runs a command inside it.
set -euo pipefail

FORKY="${TAPEGPT_FORKY:-/var/cache/tapegpt/forky}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# Forky is on the mirror this machine's apt uses for bookworm.
MIRROR="${TAPEGPT_FORKY_MIRROR:-$(bash "$ROOT/scripts/debian_mirror.sh" bookworm)}"
# transformers and torch for the Hugging Face directories, llama.cpp-tools
# (llama-completion, llama-quantize, llama-server; forky's 0.7.0 has no
# llama-perplexity) for the GGUF files, nodejs + npm to install and run
# node-llama-cpp (tests/export/llama_check.mjs).
PACKAGES=(python3-transformers python3-torch llama.cpp-tools nodejs npm ca-certificates)
STAMP="$FORKY/.tapegpt-forky-stamp"
WANT="packages: ${PACKAGES[*]}"

if [[ "$(id -u)" != 0 ]]; then
  echo "setup_forky: must run as root (debootstrap and chroot): try sudo $0" >&2
  exit 1
fi

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]]; then
  echo "setup_forky: $FORKY present"
else
  start=$SECONDS
  if [[ -e "$FORKY" ]]; then
    echo "setup_forky: $FORKY is incomplete or has other packages: making it again"
    rm -rf --one-file-system "$FORKY"
  fi
  mkdir -p "$(dirname "$FORKY")"
  # Bookworm's debootstrap knows forky's layout under the name sid. minbase
  # plus apt inside resolves the packages' dependencies with forky's own apt.
  # A base system debootstrap finished (its own stamp) is kept for a retry.
  tmp="$FORKY.partial"
  if [[ ! -f "$tmp/.tapegpt-debootstrap-done" ]]; then
    rm -rf --one-file-system "$tmp"
    echo "setup_forky: debootstrap forky into $tmp (a few minutes)"
    debootstrap --variant=minbase --include=ca-certificates forky "$tmp" "$MIRROR" \
      /usr/share/debootstrap/scripts/sid
    touch "$tmp/.tapegpt-debootstrap-done"
  fi
  echo "setup_forky: installing ${PACKAGES[*]} ($(( SECONDS - start )) s so far)"
  # A mirror that is a dated snapshot serves a Release file past its
  # Valid-Until date: accept it (the signatures are still checked).
  TAPEGPT_FORKY="$tmp" "$ROOT/scripts/in_forky.sh" sh -c \
    'echo "Acquire::Check-Valid-Until \"false\";" > /etc/apt/apt.conf.d/99tapegpt-snapshot &&
     apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" &&
     apt-get clean' apt "${PACKAGES[@]}"
  rm "$tmp/.tapegpt-debootstrap-done"
  mv "$tmp" "$FORKY"
  echo "$WANT" > "$STAMP"
  echo "setup_forky: made $FORKY in $(( SECONDS - start )) s ($(du -sh "$FORKY" | cut -f1))"
fi

# Certificate authorities added on the host (/usr/local/share/ca-certificates:
# a company's, a TLS proxy's) are trusted inside as well, for npm's HTTPS;
# copied again whenever the host's set changes.
LOCAL_CA=/usr/local/share/ca-certificates
if [[ -d "$LOCAL_CA" ]] && ! diff -r "$LOCAL_CA" "$FORKY$LOCAL_CA" >/dev/null 2>&1; then
  echo "setup_forky: trusting the host's added certificate authorities inside ($LOCAL_CA)"
  rm -rf "$FORKY$LOCAL_CA"
  cp -a "$LOCAL_CA" "$FORKY$LOCAL_CA"
  "$ROOT/scripts/in_forky.sh" update-ca-certificates --fresh >/dev/null 2>&1 ||
    { echo "setup_forky: update-ca-certificates failed inside $FORKY" >&2; exit 1; }
fi

# node-llama-cpp, pinned: real llama.cpp (its prebuilt linux-x64 CPU
# binaries) run by forky's Node.js, the oracle of tests/export. Installed by
# forky's npm into the repository's own .node/ (git-ignored; the repository
# is at the same path inside the folder), without install scripts (they
# would look for a GPU build) and without the optional CUDA/Vulkan/
# other-platform packages: about 80 MB in a few seconds.
NODE_LLAMA_CPP=3.21.1
installed="$("$ROOT/scripts/in_forky.sh" node -p \
  "require('$ROOT/.node/node_modules/node-llama-cpp/package.json').version" 2>/dev/null || true)"
if [[ "$installed" == "$NODE_LLAMA_CPP" ]]; then
  echo "setup_forky: node-llama-cpp $NODE_LLAMA_CPP present"
else
  echo "setup_forky: installing node-llama-cpp $NODE_LLAMA_CPP into $ROOT/.node with forky's npm"
  "$ROOT/scripts/in_forky.sh" npm install --prefix "$ROOT/.node" --no-save --no-audit --no-fund \
    --ignore-scripts --omit=optional \
    "node-llama-cpp@$NODE_LLAMA_CPP" "@node-llama-cpp/linux-x64@$NODE_LLAMA_CPP"
fi
