#!/usr/bin/env bash
# Blockwise against naive attention kernels in the demo model's shapes
# (4 layers, 4 heads, n_embd 192, B 8) as the context grows: one layer's
# forward + backward time and what each keeps for backward, beside the
# (blockwise) training step's tokens/s (BENCHMARKS-journal.md, "Attention
# memory and speed against T").
#   bash scripts/bench_attention.sh              # T = 256 1024 2048
#   BLOCK_SIZES="256 512" THREADS=2 TAPEGPT=build/tapegpt bash scripts/bench_attention.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench_lib.sh
BLOCK_SIZES="${BLOCK_SIZES:-256 1024 2048}"
THREADS="${THREADS:-$(nproc)}"
bench_use_tapegpt
echo "commit $(bench_commit); $(date -u '+%F %H:%M UTC'); $(bench_cpu_model), $(nproc) cores; threads $THREADS; load $(cut -d' ' -f1 /proc/loadavg)"
echo "| T | step tok/s (blockwise) | one layer's attention fwd+bwd: blockwise ms | naive ms | kept for backward: blockwise MiB | naive MiB (+ T² scratch) |"
echo "|---|---|---|---|---|---|"
for T in $BLOCK_SIZES; do
  # --naive-attention times one layer's naive and blockwise kernels directly
  # (the training step always runs the blockwise one).
  json="$("$TAPEGPT" bench --shape demo --block-size "$T" --steps 3 --warmup 1 --no-profile --sample-tokens 0 \
            --json --threads "$THREADS" --naive-attention)"
  /usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[2])
ms = lambda k: "%.2f" % (1e3 * j[k])
print("| %s | %s | %s | %s | %.3f | %.1f (+ %.1f) |" % (sys.argv[1], format(round(j["tokens_per_s"]), ","),
      ms("attention_blockwise_s"), ms("attention_naive_s"), j["attention_blockwise_saved_mib"],
      j["attention_naive_saved_mib"], j["attention_naive_scratch_mib"]))' \
    "$T" "$json"
done
