#!/usr/bin/env bash
# Checks the README's promise on a truly fresh Debian 12: in a clean folder
# made by debootstrap (minbase plus build-essential, cmake and git, nothing
# else), from a clean clone of the project, `bash scripts/demo.sh` and
# `bash scripts/test.sh` must set everything up and pass. A check to run
# before a release, not part of scripts/test.sh. Needs root (sudo otherwise),
# about 12 GB of disk and about an hour on 2 cores.
#
#   bash scripts/fresh_machine_check.sh [options] [COMMIT]
#
# COMMIT (default: HEAD of the repository the script is run from) is cloned
# into a fresh copy of the base folder; uncommitted changes are not checked.
# By default each command runs from scratch in a fresh copy of its own (so
# each one's wall time is what a user of a fresh machine waits): demo, then
# test. Each runs under `unshare --mount --pid --fork` + `chroot`, with
# /proc, /sys, /dev (its pts), a private /dev/shm and /run bound or mounted in,
# so that mpirun, network namespaces (ip netns, veth, tc), the private tmpfs
# of the disk-full tests, headless Chromium and a nested debootstrap + chroot
# work there; every mount and every process goes with the command, even when
# this script is killed. Apt in the folder uses the host's Debian mirror and
# DNS. The copies are deleted at the end; the base folder is kept.
#
# Options:
#   --only demo|test   run one command only
#   --same-copy        run both commands in one copy, one after the other (the
#                      second then finds the first's packages and build)
#   --base DIR         the cached base folder (default
#                      /var/cache/tapegpt-fresh-check/bookworm-minbase)
#   --work DIR         where run copies and logs go (default
#                      /var/tmp/tapegpt-fresh-check)
#   --mirror URL       Debian mirror (default: the host's apt source for bookworm)
#   --rebuild-base     make the base folder again
#   --base-only        make the base folder (when missing) and stop
#   --keep             keep the run's copy (its path is printed)
#   -h, --help         this text
# Exit status: 0 when every command ran passed, 1 when one failed, 2 on a
# usage or set-up error.
set -euo pipefail

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }
die() { echo "fresh_machine_check: $*" >&2; exit 2; }

SRC_REPO="$(cd "$(dirname "$0")/.." && pwd)"
BASE=/var/cache/tapegpt-fresh-check/bookworm-minbase
WORK=/var/tmp/tapegpt-fresh-check
MIRROR=""
ONLY=""
SAME_COPY=0
REBUILD=0
BASE_ONLY=0
KEEP=0
COMMIT=""
ARGS=("$@")
while (( $# )); do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --only) [[ "${2:-}" == demo || "${2:-}" == test ]] || die "--only takes demo or test"; ONLY="$2"; shift ;;
    --same-copy) SAME_COPY=1 ;;
    --base) [[ -n "${2:-}" ]] || die "--base needs a folder"; BASE="$2"; shift ;;
    --work) [[ -n "${2:-}" ]] || die "--work needs a folder"; WORK="$2"; shift ;;
    --mirror) [[ -n "${2:-}" ]] || die "--mirror needs a URL"; MIRROR="${2%/}"; shift ;;
    --rebuild-base) REBUILD=1 ;;
    --base-only) BASE_ONLY=1 ;;
    --keep) KEEP=1 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [[ -z "$COMMIT" ]] || die "one commit at most"; COMMIT="$1" ;;
  esac
  shift
done

if [[ "$(id -u)" != 0 ]]; then
  if command -v sudo >/dev/null; then
    echo "fresh_machine_check: needs root (debootstrap, chroot, mounts); running through sudo"
    exec sudo -- bash "$0" "${ARGS[@]}"
  fi
  die "needs root (debootstrap, chroot, mount namespaces, mounts), and this machine has no sudo: run it as root"
fi
for tool in debootstrap unshare chroot setpriv git perl; do
  command -v "$tool" >/dev/null || {
    [[ "$tool" == debootstrap ]] || die "needs $tool"
    echo "fresh_machine_check: installing debootstrap on this machine"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap ||
      die "cannot install debootstrap"
  }
done

COMMIT="$(git -C "$SRC_REPO" rev-parse --verify "${COMMIT:-HEAD}^{commit}")" || die "no such commit"
if [[ -n "$(git -C "$SRC_REPO" status --porcelain --untracked-files=no)" ]]; then
  echo "fresh_machine_check: note: $SRC_REPO has uncommitted changes; they are not checked (commit $COMMIT is)"
fi

# --- The mirror: the host apt's source for bookworm ----------------------
mapfile -t SOURCES < <(bash "$SRC_REPO/scripts/debian_mirror.sh" --all | awk '$2 ~ /^bookworm(-updates|-security|\/updates)?$/')
if [[ -z "$MIRROR" ]]; then
  MIRROR="$(printf '%s\n' "${SOURCES[@]}" | awk '$2 == "bookworm" { print $1; exit }')"
  [[ -n "$MIRROR" ]] || die "the host's apt has no source for bookworm: give --mirror URL"
fi
SECURITY="$(printf '%s\n' "${SOURCES[@]}" | awk '$2 == "bookworm-security" { print $1; exit }')"
echo "fresh_machine_check: commit $COMMIT of $SRC_REPO; mirror $MIRROR${SECURITY:+ (security: $SECURITY)}"

# --- The base folder: debootstrap once, cached ----------------------------
STAMP="$BASE/.tapegpt-fresh-base-complete"
make_base() {
  local tmp="$BASE.partial"
  rm -rf --one-file-system "$tmp" "$BASE"
  mkdir -p "$(dirname "$BASE")"
  echo "fresh_machine_check: making the base folder $BASE (debootstrap, a few minutes)"
  local t0=$SECONDS
  debootstrap --variant=minbase --include=build-essential,cmake,git bookworm "$tmp" "$MIRROR" \
    >"$WORK/debootstrap.log" 2>&1 || die "debootstrap failed: see $WORK/debootstrap.log"
  # Apt sources as a fresh install has them (bookworm, its updates and
  # security), on the host's mirror; the mirror's own settings (e.g. a
  # snapshot's Acquire::Check-Valid-Until) from the host's apt.conf.d.
  rm -f "$tmp/etc/apt/sources.list"
  {
    printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\n' "$MIRROR"
    printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
    if [[ -n "$SECURITY" ]]; then
      printf '\nTypes: deb\nURIs: %s\nSuites: bookworm-security\nComponents: main\n' "$SECURITY"
      printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
    fi
  } >"$tmp/etc/apt/sources.list.d/debian.sources"
  local f
  for f in /etc/apt/apt.conf.d/*; do
    if [[ -f "$f" ]] && grep -qE '^[^/#]*Acquire::(Check-Valid-Until|Check-Date|https?::Proxy|https?::proxy)' "$f"; then
      cp "$f" "$tmp/etc/apt/apt.conf.d/"
      echo "fresh_machine_check: the mirror's apt settings: $f"
    fi
  done
  echo tapegpt-fresh >"$tmp/etc/hostname"
  date -u +%FT%TZ >"$tmp/.tapegpt-fresh-base-complete"  # last: the base is whole
  mv "$tmp" "$BASE"
  echo "fresh_machine_check: base folder made in $(( SECONDS - t0 )) s ($(du -sh --one-file-system "$BASE" | cut -f1))"
}
mkdir -p "$WORK"
if (( REBUILD )) || [[ ! -f "$STAMP" ]]; then
  make_base
else
  echo "fresh_machine_check: base folder $BASE (made $(cat "$STAMP"))"
fi
(( ! BASE_ONLY )) || exit 0

# --- Run copies ------------------------------------------------------------
# Copies of runs killed before their cleanup (their script's pid is gone).
for d in "$WORK"/run.*; do
  [[ -d "$d" ]] || continue
  pid="${d##*.}"
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "fresh_machine_check: removing the stale copy $d"
    rm -rf --one-file-system "$d"
  fi
done

LOGS="$WORK/logs/$(date -u +%Y%m%dT%H%M%SZ)-${COMMIT:0:12}"
mkdir -p "$LOGS"
RUN_DIR="$WORK/run.$$"
CHILD=""
cleanup() {
  # unshare --fork ignores SIGTERM and SIGINT; on SIGKILL, --kill-child takes the namespace.
  if [[ -n "$CHILD" ]]; then kill -KILL "$CHILD" 2>/dev/null || true; wait "$CHILD" 2>/dev/null || true; fi
  local _ r busy  # the namespace's processes take a moment to go
  for _ in {1..100}; do
    busy=0
    for r in /proc/[0-9]*/root; do [[ "$(readlink "$r" 2>/dev/null)" != "$RUN_DIR"/* ]] || { busy=1; break; }; done
    (( busy )) || break
    sleep 0.1
  done
  if [[ -d "$RUN_DIR" ]]; then
    if (( KEEP )); then echo "fresh_machine_check: kept $RUN_DIR"; else rm -rf --one-file-system "$RUN_DIR"; fi
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

new_copy() {
  local root="$RUN_DIR/$1"
  mkdir -p "$RUN_DIR"
  local t0=$SECONDS
  cp -a "$BASE" "$root"
  rm -f "$root/.tapegpt-fresh-base-complete"
  git clone -q --no-checkout "$SRC_REPO" "$root/root/tapegpt"
  if ! git -C "$root/root/tapegpt" cat-file -e "$COMMIT^{commit}" 2>/dev/null; then
    git -C "$root/root/tapegpt" fetch -q --upload-pack="git -c uploadpack.allowAnySHA1InWant=true upload-pack" \
      "$SRC_REPO" "$COMMIT"
  fi
  git -C "$root/root/tapegpt" -c advice.detachedHead=false checkout -q --detach "$COMMIT"
  git -C "$root/root/tapegpt" remote remove origin
  # DNS and name lookups as the host's, so the mirror's name resolves alike.
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  cp -L /etc/hosts "$root/etc/hosts"
  # Certificate authorities the host's network needs (a TLS proxy's, a
  # company's) belong to the network, not to the machine: npm's HTTPS in the
  # forky folder (scripts/setup_forky.sh) trusts them as the host does.
  if [[ -d /usr/local/share/ca-certificates ]]; then
    mkdir -p "$root/usr/local/share"
    cp -a /usr/local/share/ca-certificates "$root/usr/local/share/"
  fi
  echo "fresh_machine_check: fresh copy $root with a clone of ${COMMIT:0:12} in /root/tapegpt ($(( SECONDS - t0 )) s)"
}

# Inside the new mount and pid namespaces (as the child of pid 1): mounts,
# then the command in the chroot with a login's clean environment.
INNER='set -e
root="$1"; cmd="$2"
mount --bind "$root" "$root"  # / a mount point, as on a machine (ip netns exec, unshare -m need it)
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs -o nosuid,nodev,mode=1777 shm "$root/dev/shm"
mount -t tmpfs -o nosuid,nodev,mode=755 run "$root/run"
mkdir -p -m 1777 "$root/run/lock"
chmod 1777 "$root/tmp"
set -o pipefail
# Each line of the log stamped with the seconds since the start.
chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash TERM=dumb \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  /bin/bash -c "cd /root/tapegpt && $cmd" 2>&1 |
  perl -ne '"'"'BEGIN { $| = 1; $t0 = time } printf "[%5d s] %s", time - $t0, $_'"'"'
'
# pid 1 of the namespace: runs the command and reaps every orphan (as init
# does on a machine: tests check that killed processes are gone), then exits
# with the command's status.
REAPER='my $pid = fork() // die "fork: $!";
if ($pid == 0) { exec @ARGV or die "exec: $!" }
$SIG{TERM} = $SIG{INT} = $SIG{HUP} = sub { kill "KILL", $pid; };
my $status = 1;
while ((my $p = waitpid(-1, 0)) > 0) { $status = $? if $p == $pid }
exit($status & 127 ? 128 + ($status & 127) : $status >> 8);'

declare -A RESULT=() SECS=() PHASES=()
run_command() {  # NAME COPY: bash scripts/NAME.sh in copy COPY
  local name="$1" root="$RUN_DIR/$2" log="$LOGS/$1.log"
  echo "fresh_machine_check: $name: bash scripts/$name.sh in $root (log: $log)"
  local t0 rc=0
  t0="$(date +%s.%N)"
  # setpriv --pdeathsig: if this script dies, even by SIGKILL, unshare gets
  # SIGKILL, and --kill-child takes pid 1 and so the whole namespace with it.
  setpriv --pdeathsig KILL unshare --mount --pid --fork --kill-child --propagation private \
    perl -e "$REAPER" bash -c "$INNER" inner "$root" "bash scripts/$name.sh" </dev/null >"$log" 2>&1 &
  CHILD=$!
  wait "$CHILD" || rc=$?
  CHILD=""
  SECS[$name]="$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')"
  cp "$root/root/tapegpt/build/ctest-output.txt" "$LOGS/$name-ctest-output.txt" 2>/dev/null || true
  if (( rc == 0 )); then RESULT[$name]=passed; else RESULT[$name]="FAILED (exit $rc)"; fi
  # The phases, from the stamps: set-up until the build's first line, the
  # build until its last, then the command's own work.
  PHASES[$name]="$(awk '/^\[ *[0-9]+ s\] \[ *[0-9]+%\]/ { t = substr($0, 2) + 0; if (first == "") first = t; last = t }
                        END { if (first != "") printf "set-up %.1f min, build %.1f min, then %.1f min", first / 60,
                                (last - first) / 60, ('"${SECS[$name]}"' - last) / 60 }' "$log")"
  echo "fresh_machine_check: $name: ${RESULT[$name]} in $(( SECS[$name] / 60 )) min $(( SECS[$name] % 60 )) s;" \
    "disk used by the copy: $(du -sh --one-file-system "$root" | cut -f1)"
  if (( rc != 0 )); then tail -n 30 "$log" | sed 's/^/  | /'; fi
}

commands=(demo test)
[[ -z "$ONLY" ]] || commands=("$ONLY")
for name in "${commands[@]}"; do
  if (( SAME_COPY )); then copy=shared; else copy="$name"; fi
  [[ -d "$RUN_DIR/$copy" ]] || new_copy "$copy"
  run_command "$name" "$copy"
  if (( ! SAME_COPY && ! KEEP )); then rm -rf --one-file-system "${RUN_DIR:?}/$copy"; fi
done

echo
echo "== fresh_machine_check: commit ${COMMIT:0:12}, Debian 12 minbase + build-essential cmake git, mirror $MIRROR"
status=0
for name in "${commands[@]}"; do
  printf '  bash scripts/%s.sh: %-18s wall %d min %02d s (%s)   log %s\n' "$name" "${RESULT[$name]}" \
    $(( SECS[$name] / 60 )) $(( SECS[$name] % 60 )) "${PHASES[$name]}" "$LOGS/$name.log"
  [[ "${RESULT[$name]}" == passed ]] || status=1
done
exit "$status"
