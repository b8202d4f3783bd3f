#!/usr/bin/env bash
# Runs a command inside the forky folder of scripts/setup_forky.sh:
#   scripts/in_forky.sh CMD [ARGS...]
# e.g. scripts/in_forky.sh llama-completion --help.
# In a mount namespace of its own (unshare --mount), so every mount below
# is gone when the command ends, even if it is killed: /proc, /sys, /dev, /tmp
# and the repository root are bound at the same absolute paths inside the
# folder, so paths a test passes (its build/, its temporary directory) mean
# the same file inside and out. The command runs in the caller's working
# directory where that is one of those, else in /. As root, or as another
# user through an unprivileged user namespace (unshare --map-root-user, on
# by default in Debian), where the command sees itself as root but acts with
# the user's own rights; the exit status is the command's.
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
  # unshare makes every mount private from / down, which needs / to be a
  # mount point: not so inside a plain chroot (a folder), where mounts could
  # otherwise leak out to the machine's namespace.
  if ! mountpoint -q /; then
    echo "in_forky: / is not a mount point (a plain chroot?): bind its folder onto itself" \
         "(mount --bind DIR DIR) before chroot DIR, so that mounts can be made private" >&2
    exit 1
  fi
  user=()
  if [[ "$(id -u)" != 0 ]]; then user=(--map-root-user); fi
  exec unshare --mount "${user[@]}" --propagation private "$0" --in-namespace "$@"
fi
shift

for d in /proc /sys /dev /tmp "$ROOT"; do
  if ! mkdir -p "$FORKY$d" 2>/dev/null; then
    echo "in_forky: no mount point $FORKY$d: run scripts/setup_forky.sh from this checkout as root once" >&2
    exit 1
  fi
  mount --rbind "$d" "$FORKY$d"
done
# The host's resolver, for apt and npm inside (debootstrap copied it once).
if [[ -f /etc/resolv.conf ]]; then
  touch "$FORKY/etc/resolv.conf" 2>/dev/null || true
  mount --bind /etc/resolv.conf "$FORKY/etc/resolv.conf" 2>/dev/null || true
fi

dir=/
case "$PWD/" in
  "$ROOT"/*|/tmp/*) dir="$PWD" ;;
esac
# A home the folder lacks (another user's) becomes /tmp, for caches.
home="${HOME:-/root}"
[[ -d "$FORKY$home" ]] || home=/tmp
exec chroot "$FORKY" /usr/bin/env -C "$dir" \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG="${LANG:-C.UTF-8}" HOME="$home" "$@"
