#!/usr/bin/env bash
# Blockwise against naive attention in whole training steps of the demo
# model (4 layers, 4 heads, n_embd 192, B 8) as the context grows:
# tokens/s and peak RSS, the two kernels alternating at each T
# (BENCHMARKS.md, "Attention memory and speed against T").
#   bash scripts/bench_attention.sh              # T = 256 1024 2048
#   BLOCK_SIZES="256 512" THREADS=2 TAPEGPT=build/tapegpt bash scripts/bench_attention.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BLOCK_SIZES="${BLOCK_SIZES:-256 1024 2048}"
THREADS="${THREADS:-$(nproc)}"
if [[ -z "${TAPEGPT:-}" ]]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build --target tapegpt -j"$(nproc)" >/dev/null
  TAPEGPT=build/tapegpt
fi
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
[[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]] && commit+="-dirty"
echo "commit $commit; $(date -u '+%F %H:%M UTC'); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; threads $THREADS; load $(cut -d' ' -f1 /proc/loadavg)"
echo "| T | blockwise tok/s | naive tok/s | blockwise peak RSS MiB | naive peak RSS MiB |"
echo "|---|---|---|---|---|"
for T in $BLOCK_SIZES; do
  row=()
  for kernel in blockwise naive; do
    flag=(); [[ $kernel == naive ]] && flag=(--naive-attention)
    row+=("$("$TAPEGPT" bench --shape demo --block-size "$T" --steps 3 --warmup 1 --no-profile --sample-tokens 0 \
              --json --threads "$THREADS" "${flag[@]}")")
  done
  /usr/bin/python3 -c '
import json, sys
b, n = (json.loads(a) for a in sys.argv[2:])
cells = [b["tokens_per_s"], n["tokens_per_s"], b["peak_rss_mib"], n["peak_rss_mib"]]
print("| " + " | ".join([sys.argv[1]] + [f"{x:,.0f}" for x in cells]) + " |")' \
    "$T" "${row[@]}"
done
