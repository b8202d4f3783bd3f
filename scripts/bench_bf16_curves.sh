#!/usr/bin/env bash
# Learning in bf16 against float32 (issues 22 and 38): nanoGPT's CPU recipe
# for Tiny Shakespeare (the README's training semantics, 2000 steps), the
# demo's own run and `--preset shakespeare-fast`, each trained with
# --precision fp32 and --precision bf16 from the same seeds (SEEDS, three by
# default), evaluated on the whole validation split at fixed intervals.
# Prints each run's final validation loss, the mean over seeds of bf16 -
# fp32 per recipe (the target: within 0.01 for each) and the training
# seconds, and draws each recipe's pair of curves (first seed) with
# `tapegpt plot`.
#   bash scripts/bench_bf16_curves.sh [--out DIR] [--quick]
#   THREADS=2 SEEDS="1337 1 2" RECIPES="recipe demo fast" bash scripts/bench_bf16_curves.sh --out /tmp/curves
# The learning curves hold on any CPU oneDNN runs bf16 on (AVX-512 or
# better): bf16 products are exact in float32 whatever the instruction set.
# The seconds are a speed result where oneDNN runs bf16 natively (its ISA,
# printed in the header, is avx512_core_bf16 or avx512_core_amx); elsewhere
# the script says so next to them.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench_lib.sh
out_dir=""
quick=0
while (( $# )); do
  case "$1" in
    --out) out_dir="${2:?--out needs a directory}"; shift ;;
    --quick) quick=1 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench_bf16_curves.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
THREADS="${THREADS:-$(nproc)}"
SEEDS="${SEEDS:-1337 1 2}"
RECIPES="${RECIPES:-recipe demo fast}"
RECIPE_STEPS=2000 DEMO_STEPS="" FAST_STEPS=""  # the demo and the preset: their own step counts
EVAL_EVERY=250
(( quick )) && RECIPE_STEPS=20 DEMO_STEPS=20 FAST_STEPS=20 EVAL_EVERY=10 SEEDS="${SEEDS%% *}"
bench_use_tapegpt
if [[ -n "$out_dir" ]]; then
  mkdir -p "$out_dir"
  WORK="$out_dir"
else
  WORK="$(mktemp -d)"
  trap 'rm -rf "$WORK"' EXIT
fi

tapegpt() { bench_run_tapegpt "$TAPEGPT" "$@"; }
EVAL=(--eval-interval "$EVAL_EVERY" --eval-steps 0 --ckpt-interval 0 --keep 0 --overwrite)
recipe_flags() {
  case "$1" in
    recipe) echo "${NANOGPT_CPU_RECIPE[*]} --max-steps $RECIPE_STEPS" ;;
    demo) echo "${DEMO_STEPS:+--max-steps $DEMO_STEPS}" ;;
    fast) echo "--preset shakespeare-fast ${FAST_STEPS:+--max-steps $FAST_STEPS}" ;;
    *) echo "bench_bf16_curves.sh: unknown recipe '$1' (recipe, demo or fast)" >&2; exit 2 ;;
  esac
}

isa="$("$TAPEGPT" bench --bf16-rate --json --threads "$THREADS" |
       /usr/bin/python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["dnnl_isa"])')"
commit="$(bench_commit)"
{
  echo "machine: $(bench_cpu_model), $(nproc) cores; oneDNN ISA: $isa"
  echo "commit: $commit; $(date -u '+%F %H:%M UTC'); threads $THREADS; seeds $SEEDS;" \
       "whole-split evaluation every $EVAL_EVERY steps"
} | tee "$WORK/header.txt"

tapegpt prepare --input data/tinyshakespeare.txt --tokenizer char --out "$WORK/data" >/dev/null
for name in $RECIPES; do
  read -r -a flags <<< "$(recipe_flags "$name")"
  for seed in $SEEDS; do
    for precision in fp32 bf16; do
      echo "== $name, seed $seed, $precision ($(date -u +%H:%M:%S))" >&2
      # --seed after the recipe's flags: the later one wins.
      tapegpt train --data "$WORK/data" --out "$WORK/$name-$seed-$precision" "${flags[@]}" "${EVAL[@]}" \
        --seed "$seed" --precision "$precision" | grep -E "^precision|^done" >&2
    done
  done
done

/usr/bin/python3 - "$WORK" "$isa" "$RECIPES" "$SEEDS" <<'PY' | tee "$WORK/summary.md"
import json, os, sys
work, isa, recipes, seeds = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
native = isa in ("avx512_core_bf16", "avx512_core_amx")
TARGET = 0.01
def last(run):
    rows = [json.loads(l) for l in open(os.path.join(work, run, "metrics.jsonl"))]
    val = [r for r in rows if "val_loss" in r][-1]
    steps = [r for r in rows if "loss" in r]
    return val["val_loss"], val["step"], steps[-1]["train_s"]
secs = f"training s ({isa}" + (")" if native else ": bf16 emulated, not a speed result)")
print(f"| run | seed | steps | final val loss fp32 | bf16 | bf16 - fp32 | {secs} fp32 / bf16 |")
print("|---|---:|---:|---:|---:|---:|---:|")
verdicts = []
for name in recipes:
    diffs = []
    for seed in seeds:
        f, b = last(f"{name}-{seed}-fp32"), last(f"{name}-{seed}-bf16")
        diffs.append(b[0] - f[0])
        print(f"| {name} | {seed} | {f[1]} | {f[0]:.4f} | {b[0]:.4f} | {b[0] - f[0]:+.4f} | {f[2]:.1f} / {b[2]:.1f} |")
    mean = sum(diffs) / len(diffs)
    verdicts.append(f"| {name} | {len(diffs)} | {mean:+.4f} | ±{TARGET} {'met' if abs(mean) <= TARGET else 'MISSED'} |")
print()
print("| recipe | seeds | mean bf16 - fp32 | target |")
print("|---|---:|---:|---|")
print("\n".join(verdicts))
PY
first="${SEEDS%% *}"
for name in $RECIPES; do
  tapegpt plot "$WORK/$name-$first-fp32" "$WORK/$name-$first-bf16" --out "$WORK/$name.svg" --overwrite >/dev/null
done
[[ -n "$out_dir" ]] && echo "runs, summary.md and one SVG per recipe (tapegpt plot) in $out_dir"
exit 0
