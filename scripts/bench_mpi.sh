#!/usr/bin/env bash
# Data-parallel training with and without the overlapped all-reduce (Note
# [All-reduce overlap]), and one process for reference, on this machine:
# step time and the all-reduce wait from metrics.jsonl, runs alternating.
#   bash scripts/bench_mpi.sh                      # 2 ranks, 1 thread each
#   NP=2 STEPS=40 ROUNDS=3 TAPEGPT=build/tapegpt bash scripts/bench_mpi.sh
set -euo pipefail
cd "$(dirname "$0")/.."
NP="${NP:-2}"; STEPS="${STEPS:-30}"; ROUNDS="${ROUNDS:-2}"
TAPEGPT="${TAPEGPT:-build/tapegpt}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # CI and containers run as root
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
"$TAPEGPT" prepare --input data/tinyshakespeare.txt --out "$work/data" --tokenizer char >/dev/null
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "commit $commit; $(date -u '+%F %H:%M UTC'); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; load $(cut -d' ' -f1 /proc/loadavg)"
echo "demo model, --batch-size 8 --grad-accum $NP (one micro-batch per rank), $STEPS steps, medians of the steps after the first 5"
flags=(train --data "$work/data" --n-layer 4 --n-head 4 --n-embd 192 --block-size 128 --batch-size 8
       --grad-accum "$NP" --max-steps "$STEPS" --eval-interval 0 --ckpt-interval 0 --eval-steps 1)
summary() {  # summary NAME RUNDIR: median step seconds, tokens/s and all-reduce wait
  /usr/bin/python3 - "$1" "$2/metrics.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[2]) if '"loss"' in l and '"val_loss"' not in l][5:]
tok = statistics.median(r["tokens_per_s"] for r in rows)
wait = statistics.median(r.get("allreduce_s", 0.0) for r in rows)
print(f"| {sys.argv[1]} | {tok:,.0f} | {wait * 1e3:.1f} |")
PY
}
echo "| run | tokens/s (global) | all-reduce wait ms/step |"
echo "|---|---|---|"
for round in $(seq "$ROUNDS"); do
  for mode in overlap no-overlap one; do
    out="$work/run-$mode-$round"
    case $mode in
      overlap)    mpirun -np "$NP" --bind-to core "$TAPEGPT" "${flags[@]}" --out "$out" --threads 1 >/dev/null 2>&1 ;;
      no-overlap) mpirun -np "$NP" --bind-to core "$TAPEGPT" "${flags[@]}" --out "$out" --threads 1 --no-overlap >/dev/null 2>&1 ;;
      one)        "$TAPEGPT" "${flags[@]}" --out "$out" --threads "$NP" >/dev/null 2>&1 ;;
    esac
    summary "$mode (round $round)" "$out"
  done
done
