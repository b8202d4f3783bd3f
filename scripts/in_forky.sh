#!/usr/bin/env bash
# Runs a command inside the forky folder of scripts/setup_forky.sh:
#   scripts/in_forky.sh CMD [ARGS...]
# e.g. scripts/in_forky.sh llama-completion --help.
# In a mount namespace of its own (unshare --mount), so every mount below
# is gone when the command ends, even if it is killed: /proc, /sys, /dev, /tmp
# and the repository root are bound at the same absolute paths inside the
# folder, so paths a test passes (its build/, its temporary directory) mean
# the same file inside and out. The command runs in the caller's working
# directory where that is one of those, else in /. Needs root (CAP_SYS_ADMIN
# for unshare and chroot); the exit status is the command's.
set -euo pipefail

FORKY="${TAPEGPT_FORKY:-/var/cache/tapegpt/forky}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

if [[ "${1:-}" != --in-namespace ]]; then
  if (( $# == 0 )); then
    echo "usage: $0 CMD [ARGS...]: runs CMD inside $FORKY" >&2
    exit 2
  fi
  if [[ ! -x "$FORKY/usr/bin/apt-get" ]]; then
    echo "in_forky: no forky folder at $FORKY: run scripts/setup.sh (or scripts/setup_forky.sh)" >&2
    exit 127
  fi
  if [[ "$(id -u)" != 0 ]]; then
    echo "in_forky: must run as root (unshare --mount and chroot): try sudo $0" >&2
    exit 1
  fi
  exec unshare --mount --propagation private "$0" --in-namespace "$@"
fi
shift

for d in /proc /sys /dev /tmp "$ROOT"; do
  mkdir -p "$FORKY$d"
  mount --rbind "$d" "$FORKY$d"
done
# The host's resolver, for apt and npm inside (debootstrap copied it once).
if [[ -f /etc/resolv.conf ]]; then
  touch "$FORKY/etc/resolv.conf"
  mount --bind /etc/resolv.conf "$FORKY/etc/resolv.conf" 2>/dev/null || true
fi

dir=/
case "$PWD/" in
  "$ROOT"/*|/tmp/*) dir="$PWD" ;;
esac
exec chroot "$FORKY" /usr/bin/env -C "$dir" \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG="${LANG:-C.UTF-8}" "$@"
