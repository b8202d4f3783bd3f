# shellcheck shell=bash disable=SC2034  # sets variables for the scripts that source it
# What the bench scripts share: sourced (". scripts/bench_lib.sh") from the
# repository root by a script that has already set -euo pipefail. One copy of
# each fact, so that a fix (say, to how ldd is read) reaches every script.

# nanoGPT's CPU recipe for Tiny Shakespeare in tapegpt's flags (4 layers,
# 4 heads, 128 wide, T 64, B 12, no biases, erf GELU, dropout 0, AdamW
# betas 0.9/0.99, lr 1e-3 -> 1e-4 cosine with warmup 100), without its step
# count; scripts/time_to_loss.py torch has the same defaults.
NANOGPT_CPU_RECIPE=(--n-layer 4 --n-head 4 --n-embd 128 --block-size 64 --batch-size 12 --no-bias --gelu erf
                    --dropout 0 --beta2 0.99 --weight-decay 0.1 --grad-clip 1.0 --lr 1e-3 --min-lr 1e-4
                    --warmup 100 --seed 1337)

# Sets TAPEGPT to build/tapegpt, built in Release, unless the caller set it.
bench_use_tapegpt() {
  if [[ -z "${TAPEGPT:-}" ]]; then
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build --target tapegpt -j"$(nproc)" >/dev/null
    TAPEGPT=build/tapegpt
  fi
}

# Runs tapegpt binary $1 with the rest as arguments and --threads $THREADS
# deciding its threads alone: the caller's OpenMP and OpenBLAS settings are
# cleared, so tapegpt runs on its own defaults as a user's would.
bench_run_tapegpt() {
  local bin="$1"
  shift
  env -u OMP_WAIT_POLICY -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS "$bin" "$@" --threads "$THREADS"
}

# The short commit, with "-dirty" when a tracked file differs from it.
bench_commit() {
  local commit
  commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if [[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]]; then commit+="-dirty"; fi
  echo "$commit"
}

# A script comparing against a base commit (bench_against.sh, bench_optimizer_kernel.sh):
# bench_parse_base ARG prints the script's help (its comment lines 2 to
# HELP_END) for -h/--help and exits, or exits 2 with one line unless ARG
# names a commit of this repository.
bench_parse_base() {
  local name help_end="${HELP_END:?}"
  name="$(basename "$0")"
  case "${1:-}" in
    -h|--help) sed -n "2,${help_end}p" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    "") echo "$name: give the base commit (see bash scripts/$name --help)" >&2; exit 2 ;;
  esac
  git rev-parse --verify --quiet "$1^{commit}" >/dev/null ||
    { echo "$name: '$1' is not a commit of this repository (see git log)" >&2; exit 2; }
}

# bench_base_worktree BASE: sets $work to a new temporary directory, removed
# on exit, and checks BASE out in $work/src (a git worktree, removed too).
bench_base_worktree() {
  work="$(mktemp -d)"
  trap 'git worktree remove --force "$work/src" 2>/dev/null || true; rm -rf "$work"' EXIT
  git worktree add --detach --quiet "$work/src" "$1"
}

# The CPU's model name, as /proc/cpuinfo gives it.
bench_cpu_model() { grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs; }

# The file of the shared library matching the ldd name pattern $2 (e.g.
# libopenblas) that binary $1 loads; empty if it loads none. awk reads ldd's
# output to the end: an early `exit` would SIGPIPE ldd, which exits 1, and
# set -o pipefail would turn that into a silent exit of the whole script.
bench_loaded_lib() { ldd "$1" | awk -v pat="^$2" '$1 ~ pat && !n++ {print $3}'; }

# The libopenblas file $TAPEGPT loads, or one error line and exit 1.
bench_blas_lib() {
  local lib
  lib="$(bench_loaded_lib "$TAPEGPT" libopenblas)"
  if [[ -z "$lib" ]]; then
    echo "$(basename "$0"): ldd finds no libopenblas in $TAPEGPT" >&2
    exit 1
  fi
  echo "$lib"
}

# The fair PyTorch (scripts/bench.sh says why): sets the array torch_env to
# an `env` command line that gives PyTorch tapegpt's OpenBLAS file $2 and the
# core type $1 it runs, $3 threads for OpenMP and OpenBLAS, and OpenMP wait
# policy $4 ("default" leaves it unset); extra VAR=value arguments follow.
bench_fair_torch_env() {
  local core="$1" blas_lib="$2" threads="$3" policy="$4"
  shift 4
  local wait_policy=(OMP_WAIT_POLICY="$policy")
  [[ "$policy" == default ]] && wait_policy=(-u OMP_WAIT_POLICY)
  torch_env=(env -u ONEDNN_VERBOSE -u DNNL_VERBOSE "${wait_policy[@]}" OPENBLAS_CORETYPE="$core"
             LD_LIBRARY_PATH="$(dirname "$blas_lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
             OMP_NUM_THREADS="$threads" OPENBLAS_NUM_THREADS="$threads" "$@")
}
