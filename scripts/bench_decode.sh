#!/usr/bin/env bash
# KV-cache decoding (issue 41: one model, one forward): how long `sample`
# takes to read a 256-token prompt in one pass against generating 256
# tokens, same model, same machine, alternating, from the times `sample`
# prints on stderr (in-process: loading the checkpoint is not counted).
# Each generation run starts from a 1-token prompt whose pass pays the
# first-call costs the 256-token prompt pays too, so the ratio is
#   read 256 / (read 1 + generate 256).
# Models: 4 layers x 128 and 6 x 384, block 256, char Tiny Shakespeare
# (3 training steps: speed does not depend on the weights); threads 1 and 2;
# float32, and bf16 where oneDNN runs it natively.
#   bash scripts/bench_decode.sh                # this checkout's build/tapegpt
#   ROUNDS=5 bash scripts/bench_decode.sh
#   BASE=/path/to/old/tapegpt bash scripts/bench_decode.sh   # also generation tokens/s, old against new
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench_lib.sh
ROUNDS="${ROUNDS:-3}"
bench_use_tapegpt
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
head -c 300000 data/tinyshakespeare.txt > "$work/corpus.txt"
"$TAPEGPT" prepare --input "$work/corpus.txt" --out "$work/data" --tokenizer char >/dev/null
prompt="$(head -c 5000 "$work/corpus.txt" | tail -c 256)"
precisions="fp32"
grep -qw avx512_bf16 /proc/cpuinfo && precisions="fp32 bf16"
echo "machine: $(bench_cpu_model), $(nproc) cores; rounds $ROUNDS; $(date -u '+%F %H:%M UTC'); commit $(bench_commit)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
ms() { sed -E "s/.*$1: [0-9]+ tokens in ([0-9.]+) ms.*/\1/"; }
for shape in "4 4 128" "6 6 384"; do
  read -r L H C <<< "$shape"
  run="$work/run_${L}x$C"
  "$TAPEGPT" train --data "$work/data" --out "$run" --n-layer "$L" --n-head "$H" --n-embd "$C" --block-size 256 \
    --batch-size 2 --max-steps 3 --precision fp32 >/dev/null 2>&1
  for threads in 1 2; do
    for precision in $precisions; do
      for round in $(seq "$ROUNDS"); do
        read_line="$("$TAPEGPT" sample --ckpt "$run/ckpt.h5" --prompt "$prompt" --max-new-tokens 1 --threads "$threads" \
          --precision "$precision" 2>&1 >/dev/null | grep '^prompt:')"
        gen_line="$("$TAPEGPT" sample --ckpt "$run/ckpt.h5" --prompt F --max-new-tokens 256 --threads "$threads" \
          --precision "$precision" 2>&1 >/dev/null | grep '^prompt:')"
        echo "${L}x$C $threads $precision $(ms prompt <<< "$read_line") $(ms prompt <<< "$gen_line") $(ms generated <<< "$gen_line")" >> "$work/times"
      done
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$work/times" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    model, threads, precision, read, first, gen = line.split()
    rows.setdefault((model, threads, precision), []).append((float(read), float(first), float(gen)))
print("| model | threads | precision | read 256 ms | read 1 + generate 256 ms | ratio (median of rounds) |")
print("|---|---:|---|---:|---:|---:|")
for (model, threads, precision), rs in rows.items():
    read = statistics.median(r[0] for r in rs)
    gen = statistics.median(r[1] + r[2] for r in rs)
    ratio = statistics.median(r[0] / (r[1] + r[2]) for r in rs)
    print(f"| {model} | {threads} | {precision} | {read:.1f} | {gen:.1f} | {ratio:.2f} |")
PY
if [[ -n "${BASE:-}" ]]; then
  echo
  echo "generation tokens/s (bench --sample-tokens 256, 2 threads), base $BASE against $TAPEGPT, alternating:"
  tps() { env -u OMP_NUM_THREADS "$1" bench --shape "$2" --steps 1 --warmup 0 --no-profile --sample-tokens 256 \
            --precision "$3" --threads 2 --json | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["sample_tokens_per_s"])'; }
  for shape in S M; do
    for precision in $precisions; do
      base_tps=() this_tps=()
      for round in $(seq "$ROUNDS"); do
        if (( round % 2 )); then base_tps+=("$(tps "$BASE" $shape $precision)"); this_tps+=("$(tps "$TAPEGPT" $shape $precision)")
        else this_tps+=("$(tps "$TAPEGPT" $shape $precision)"); base_tps+=("$(tps "$BASE" $shape $precision)"); fi
      done
      /usr/bin/python3 -c 'import statistics, sys; b = [float(x) for x in sys.argv[3].split()]; t = [float(x) for x in sys.argv[4].split()]; print(f"{sys.argv[1]} {sys.argv[2]}: base {statistics.median(b):.0f}, this {statistics.median(t):.0f} tokens/s, this/base {statistics.median(t) / statistics.median(b):.2f}")' \
        "$shape" "$precision" "${base_tps[*]}" "${this_tps[*]}"
    done
  done
fi
