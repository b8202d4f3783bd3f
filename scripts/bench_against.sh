#!/usr/bin/env bash
# Is a change slower? The training step of this checkout's tapegpt against
# the one of a base commit, same flags, alternating the two binaries within
# each round so that the machine's noise falls on both. Prints each shape's
# median step time per binary (and its optimizer part) and the median of the rounds' ratios
# (this / base). With no FLAGS, this checkout runs its defaults (--precision
# auto included): what "auto costs nothing without AMX" (issue 22) measures.
#   bash scripts/bench_against.sh 9ed6f04             # base: the commit before --precision
#   SHAPES="S M" ROUNDS=5 THREADS=2 bash scripts/bench_against.sh BASE
#   FLAGS="--precision fp32" bash scripts/bench_against.sh BASE   # flags for this checkout's binary only
#   FLAGS="--precision bf16" BASE_FLAGS="--precision bf16" bash scripts/bench_against.sh BASE   # and the base's
# The base is built from `git worktree add` in a temporary directory (removed
# on exit); TAPEGPT=/path/to/tapegpt replaces this checkout's build.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench_lib.sh
HELP_END=13 bench_parse_base "${1:-}"
base="$1"
SHAPES="${SHAPES:-S M G}"
ROUNDS="${ROUNDS:-5}"
THREADS="${THREADS:-$(nproc)}"
read -r -a flags <<< "${FLAGS:-}"
read -r -a base_flags <<< "${BASE_FLAGS:-}"
bench_use_tapegpt

echo "building $base in a temporary worktree ..." >&2
bench_base_worktree "$base"
cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" --target tapegpt -j"$(nproc)" >/dev/null
base_bin="$work/build/tapegpt"

echo "machine: $(bench_cpu_model), $(nproc) cores; threads $THREADS; rounds $ROUNDS; $(date -u '+%F %H:%M UTC')"
echo "this: $(bench_commit) ($TAPEGPT${flags[*]:+ ${flags[*]}}); base: $(git rev-parse --short "$base")${base_flags[*]:+ (${base_flags[*]})}"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
step() {  # step BINARY SHAPE [FLAGS...]: one bench run's median step and optimizer seconds
  local bin="$1" shape="$2" steps=8 warmup=2
  shift 2
  [[ "$shape" == G ]] && steps=3 warmup=1  # G steps take seconds each
  bench_run_tapegpt "$bin" bench --shape "$shape" --steps "$steps" --warmup "$warmup" --no-profile \
    --sample-tokens 0 --json "$@" |
    /usr/bin/python3 -c 'import json, sys; r = json.load(sys.stdin); print(r["step_s"], r.get("optimizer_s", float("nan")))'
}
for shape in $SHAPES; do
  for round in $(seq "$ROUNDS"); do
    # Alternate which binary goes first, so neither always runs on a warmer machine.
    if (( round % 2 )); then
      echo "$shape base $(step "$base_bin" "$shape" "${base_flags[@]}")" >> "$work/times"
      echo "$shape this $(step "$TAPEGPT" "$shape" "${flags[@]}")" >> "$work/times"
    else
      echo "$shape this $(step "$TAPEGPT" "$shape" "${flags[@]}")" >> "$work/times"
      echo "$shape base $(step "$base_bin" "$shape" "${base_flags[@]}")" >> "$work/times"
    fi
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$work/times" <<'PY'
import statistics, sys
times = {}
for line in open(sys.argv[1]):
    shape, side, step, optimizer = line.split()
    times.setdefault(shape, {}).setdefault(side, []).append((float(step), float(optimizer)))
# Each round's ratio is taken side by side; their median is the figure (the
# machine's load changes between rounds more than within one).
# The optimizer's part of the step (clip + update + zeroing), as bench times
# it, follows each step time.
print("| shape | base median step s | this median step s | this / base (median of rounds) | each round's this / base "
      "| optimizer s, base / this (medians) |")
print("|---|---:|---:|---:|---|---:|")
for shape, t in times.items():
    ratios = [x[0] / y[0] for x, y in zip(t["this"], t["base"])]
    per = " ".join(f"{r:.3f}" for r in ratios)
    med = {side: [statistics.median(v[i] for v in t[side]) for i in (0, 1)] for side in ("base", "this")}
    print(f"| {shape} | {med['base'][0]:.4f} | {med['this'][0]:.4f} | {statistics.median(ratios):.3f} | {per} "
          f"| {med['base'][1]:.4f} / {med['this'][1]:.4f} |")
PY
