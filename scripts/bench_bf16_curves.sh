#!/usr/bin/env bash
# Learning in bf16 against float32 (issue 22): nanoGPT's CPU recipe for Tiny
# Shakespeare (the README's training semantics, 2000 steps) and the demo's
# own run, each trained with --precision fp32 and --precision bf16 from the
# same seed, evaluated on the whole validation split at fixed intervals.
# Prints each run's final validation loss, the bf16 - fp32 difference (the
# targets: within 0.01 for the recipe, 0.02 for the demo) and the training
# seconds, and draws both pairs of curves with `tapegpt plot`.
#   bash scripts/bench_bf16_curves.sh [--out DIR] [--quick]
#   THREADS=2 TAPEGPT=build/tapegpt bash scripts/bench_bf16_curves.sh --out /tmp/curves
# The learning curves hold on any CPU oneDNN runs bf16 on (AVX-512 or
# better): bf16 products are exact in float32 whatever the instruction set.
# The seconds are a speed result only on a CPU with AMX-BF16; elsewhere the
# script says so next to them.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench_lib.sh
out_dir=""
quick=0
while (( $# )); do
  case "$1" in
    --out) out_dir="${2:?--out needs a directory}"; shift ;;
    --quick) quick=1 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench_bf16_curves.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
THREADS="${THREADS:-$(nproc)}"
RECIPE_STEPS=2000 DEMO_STEPS=""  # the demo: train's defaults
EVAL_EVERY=250
(( quick )) && RECIPE_STEPS=20 DEMO_STEPS=20 EVAL_EVERY=10
bench_use_tapegpt
if [[ -n "$out_dir" ]]; then
  mkdir -p "$out_dir"
  WORK="$out_dir"
else
  WORK="$(mktemp -d)"
  trap 'rm -rf "$WORK"' EXIT
fi

tapegpt() { bench_run_tapegpt "$TAPEGPT" "$@"; }
RECIPE=("${NANOGPT_CPU_RECIPE[@]}" --max-steps "$RECIPE_STEPS")
DEMO=(${DEMO_STEPS:+--max-steps "$DEMO_STEPS"})
EVAL=(--eval-interval "$EVAL_EVERY" --eval-steps 0 --ckpt-interval 0 --keep 0 --overwrite)

amx="no"
grep -qw amx_bf16 /proc/cpuinfo && amx="yes"
commit="$(bench_commit)"
{
  echo "machine: $(bench_cpu_model), $(nproc) cores; amx_bf16 in /proc/cpuinfo: $amx"
  echo "commit: $commit; $(date -u '+%F %H:%M UTC'); threads $THREADS; whole-split evaluation every $EVAL_EVERY steps"
  echo "oneDNN: $("$TAPEGPT" bench --bf16-rate --threads "$THREADS" | head -1)"
} | tee "$WORK/header.txt"

tapegpt prepare --input data/tinyshakespeare.txt --tokenizer char --out "$WORK/data" >/dev/null
for precision in fp32 bf16; do
  echo "== recipe, $precision" >&2
  tapegpt train --data "$WORK/data" --out "$WORK/recipe-$precision" "${RECIPE[@]}" "${EVAL[@]}" \
    --precision "$precision" | grep -E "^precision|^done" >&2
  echo "== demo, $precision" >&2
  tapegpt train --data "$WORK/data" --out "$WORK/demo-$precision" "${DEMO[@]}" "${EVAL[@]}" \
    --precision "$precision" | grep -E "^precision|^done" >&2
done

/usr/bin/python3 - "$WORK" "$amx" <<'PY' | tee "$WORK/summary.md"
import json, os, sys
work, amx = sys.argv[1], sys.argv[2]
def last(run):
    rows = [json.loads(l) for l in open(os.path.join(work, run, "metrics.jsonl"))]
    val = [r for r in rows if "val_loss" in r][-1]
    steps = [r for r in rows if "loss" in r]
    return val["val_loss"], val["step"], steps[-1]["train_s"]
secs = "training s" + ("" if amx == "yes" else " (no AMX: not a speed result)")
print(f"| run | steps | final val loss (whole split) | bf16 - fp32 | target | {secs} |")
print("|---|---:|---:|---:|---:|---:|")
for name, target in (("recipe", 0.01), ("demo", 0.02)):
    f, b = last(f"{name}-fp32"), last(f"{name}-bf16")
    d = b[0] - f[0]
    print(f"| {name} fp32 | {f[1]} | {f[0]:.4f} | | | {f[2]:.1f} |")
    print(f"| {name} bf16 | {b[1]} | {b[0]:.4f} | {d:+.4f} | ±{target} {'met' if abs(d) <= target else 'MISSED'} | {b[2]:.1f} |")
PY
tapegpt plot "$WORK/recipe-fp32" "$WORK/recipe-bf16" --out "$WORK/recipe.svg" --overwrite >/dev/null
tapegpt plot "$WORK/demo-fp32" "$WORK/demo-bf16" --out "$WORK/demo.svg" --overwrite >/dev/null
[[ -n "$out_dir" ]] && echo "runs, summary.md, recipe.svg and demo.svg (tapegpt plot) in $out_dir"
exit 0
