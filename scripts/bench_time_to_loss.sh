#!/usr/bin/env bash
# Time to loss: nanoGPT's CPU recipe for Tiny Shakespeare (4 layers, 4 heads,
# 128 wide, T 64, B 12, no biases, erf GELU, dropout 0, AdamW betas 0.9/0.99,
# lr 1e-3 -> 1e-4 cosine with warmup 100, 2000 steps) trained side by side on
# this machine by
#   (a) PyTorch, float32                      (scripts/time_to_loss.py torch)
#   (b) PyTorch under torch.autocast("cpu", dtype=torch.bfloat16)
#   (c) tapegpt with the same hyper-parameters (its default recipe)
#   (d) tapegpt's fast recipe (FAST_FLAGS, default --preset shakespeare-fast)
#   (e) the fast recipe with --precision fp32, where oneDNN runs bf16
#       natively (AVX512_BF16 or AMX) and --precision auto chose bf16 for
#       (c) and (d): the float32 counterpart, as (a) is (b)'s
# each evaluated on the whole validation split every EVAL_EVERY steps, the
# evaluations' time excluded (metrics.jsonl's train_s). Prints, for each, the
# training wall time at which it first reaches the validation loss PyTorch
# float32 ends at, and the ratio to PyTorch's time.
#   bash scripts/bench_time_to_loss.sh                   # all four, 2000 steps, all cores
#   bash scripts/bench_time_to_loss.sh --out DIR         # keep runs, summary.{md,json}, time_to_loss.svg in DIR
#   bash scripts/bench_time_to_loss.sh --quick           # 20 steps each: checks the script end to end (no figures)
#   STEPS=1000 EVAL_EVERY=50 THREADS=2 bash scripts/bench_time_to_loss.sh
#   FAST_FLAGS="--preset shakespeare-fast --optimizer muon" bash scripts/bench_time_to_loss.sh
#   FAST_STEPS=1200   the fast recipe's --max-steps (default: the recipe's own)
#   BF16=0            leaves out (b) and (e); TAPEGPT=/path/to/tapegpt uses that binary
#   CORPUS=FILE       another text than data/tinyshakespeare.txt (the tests' short one)
# The PyTorch side is set up as scripts/bench.sh's fair baseline (see there
# why): the same OpenBLAS file and core type as tapegpt, the same threads,
# OMP_WAIT_POLICY=PASSIVE (TORCH_WAIT_POLICY); tapegpt gets --threads alone.
# The runs go one after another, never at once; only the ratios of one run
# of this script mean anything on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench_lib.sh

out_dir=""
quick=0
while (( $# )); do
  case "$1" in
    --quick) quick=1 ;;
    --out) out_dir="${2:?--out needs a directory}"; shift ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench_time_to_loss.sh: unknown argument '$1' (see bash scripts/bench_time_to_loss.sh --help)" >&2
       exit 2 ;;
  esac
  shift
done
if (( quick )); then
  STEPS="${STEPS:-20}" EVAL_EVERY="${EVAL_EVERY:-10}" FAST_STEPS="${FAST_STEPS:-${STEPS}}"
fi
STEPS="${STEPS:-2000}"
EVAL_EVERY="${EVAL_EVERY:-100}"
THREADS="${THREADS:-$(nproc)}"
FAST_FLAGS="${FAST_FLAGS:---preset shakespeare-fast}"
FAST_STEPS="${FAST_STEPS:-}"
BF16="${BF16:-1}"
CORPUS="${CORPUS:-data/tinyshakespeare.txt}"
TORCH_WAIT_POLICY="${TORCH_WAIT_POLICY:-PASSIVE}"

bench_use_tapegpt
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "bench_time_to_loss.sh: PyTorch is not installed for /usr/bin/python3 (TAPEGPT_WITH_TORCH=1 scripts/setup.sh" \
       "installs it); the baseline needs it" >&2
  exit 77
fi
if [[ -n "$out_dir" ]]; then
  mkdir -p "$out_dir"
  WORK="$out_dir"
else
  WORK="$(mktemp -d)"
  trap 'rm -rf "$WORK"' EXIT
fi

EVAL_FLAGS=(--eval-interval "$EVAL_EVERY" --eval-steps 0 --ckpt-interval 0 --keep 0 --overwrite)

tapegpt() { bench_run_tapegpt "$TAPEGPT" "$@"; }

"$TAPEGPT" prepare --input "$CORPUS" --tokenizer char --out "$WORK/data" >/dev/null

# scripts/bench.sh's fair PyTorch: tapegpt's OpenBLAS file and the core it runs.
blas_lib="$(bench_blas_lib)"
core="$(tapegpt bench --shape S --block-size 8 --batch-size 1 --steps 1 --warmup 0 --sample-tokens 0 --no-profile \
        --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["blas_core"])')"
bench_fair_torch_env "$core" "$blas_lib" "$THREADS" "$TORCH_WAIT_POLICY"
torch_run() {
  "${torch_env[@]}" /usr/bin/python3 scripts/time_to_loss.py torch --data "$WORK/data" --threads "$THREADS" \
    --steps "$STEPS" --eval-every "$EVAL_EVERY" "$@"
}

commit="$(bench_commit)"
{
  echo "machine: $(bench_cpu_model), $(nproc) cores"
  echo "commit: $commit; $(date -u '+%F %H:%M UTC'); threads $THREADS; $STEPS steps, whole-split evaluation every $EVAL_EVERY"
  echo "tapegpt: $TAPEGPT, OpenBLAS $blas_lib, core $core"
  echo "PyTorch: $("${torch_env[@]}" /usr/bin/python3 -c 'import torch; print(torch.__version__)'); ${torch_env[*]:1}"
  echo "fast recipe: $FAST_FLAGS${FAST_STEPS:+ --max-steps $FAST_STEPS}"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$WORK/header.txt"

runs=()
echo "== (a) PyTorch float32" >&2
torch_run --out "$WORK/torch-fp32" >&2
runs+=(--run "pytorch-fp32=$WORK/torch-fp32")
if [[ "$BF16" != 0 ]]; then
  echo "== (b) PyTorch bf16 autocast" >&2
  torch_run --out "$WORK/torch-bf16" --bf16 >&2
  runs+=(--run "pytorch-bf16=$WORK/torch-bf16")
fi
echo "== (c) tapegpt, the same recipe" >&2
tapegpt train --data "$WORK/data" --out "$WORK/tapegpt-default" "${NANOGPT_CPU_RECIPE[@]}" --max-steps "$STEPS" \
  "${EVAL_FLAGS[@]}" | grep -E "val loss|^done" >&2
runs+=(--run "tapegpt-default=$WORK/tapegpt-default")
echo "== (d) tapegpt, fast: $FAST_FLAGS" >&2
read -r -a fast <<< "$FAST_FLAGS"
tapegpt train --data "$WORK/data" --out "$WORK/tapegpt-fast" "${fast[@]}" ${FAST_STEPS:+--max-steps "$FAST_STEPS"} \
  "${EVAL_FLAGS[@]}" | grep -E "val loss|^done" >&2
runs+=(--run "tapegpt-fast=$WORK/tapegpt-fast")
# Where oneDNN runs bf16 natively, auto trained (c) and (d) in bf16: (e) is
# the fast recipe in float32 beside them, the precision PyTorch's (a) uses.
bf16_isa="$("$TAPEGPT" bench --bf16-rate --json | /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin)
print(r["dnnl_isa"] if r.get("bf16_native") else "")')"
if [[ "$BF16" != 0 && -n "$bf16_isa" ]]; then
  echo "== (e) tapegpt, fast, --precision fp32 (oneDNN runs $bf16_isa, native bf16, so auto chose bf16 above)" >&2
  tapegpt train --data "$WORK/data" --out "$WORK/tapegpt-fast-fp32" "${fast[@]}" ${FAST_STEPS:+--max-steps "$FAST_STEPS"} \
    --precision fp32 "${EVAL_FLAGS[@]}" | grep -E "val loss|^done" >&2
  runs+=(--run "tapegpt-fast-fp32=$WORK/tapegpt-fast-fp32")
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$WORK/header.txt"

echo
/usr/bin/python3 scripts/time_to_loss.py summary "${runs[@]}" --baseline pytorch-fp32 \
  --md "$WORK/summary.md" --json "$WORK/summary.json"
plot_dirs=()
for (( i = 1; i < ${#runs[@]}; i += 2 )); do plot_dirs+=("${runs[i]#*=}"); done
"$TAPEGPT" plot "${plot_dirs[@]}" --out "$WORK/time_to_loss.svg" --overwrite >/dev/null
[[ -n "$out_dir" ]] && echo "runs, summary.md, summary.json and time_to_loss.svg (tapegpt plot) in $out_dir"
exit 0
