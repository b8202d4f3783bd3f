#!/usr/bin/env bash
# KV-cache decoding (issue 41: one model, one forward): how long `sample`
# takes to read a 256-token prompt in one pass against generating 256
# tokens, same model, same machine, alternating, from the times `sample`
# prints on stderr (in-process: loading the checkpoint is not counted).
# Each generation run starts from a 1-token prompt whose pass pays the
# first-call costs the 256-token prompt pays too, so the ratio is
#   read 256 / (read 1 + generate 256).
# Models (issue 51: every shape from 2 x 128 to GPT-2 small): 2 layers x
# 128, 4 x 128, 6 x 384, char Tiny Shakespeare, and GPT-2 small's shape
# (12 x 768, GPT-2's tokenizer, 50257 tokens), all with block 512 (no
# context shift while 257 tokens are read and generated);
# 1 training step each (speed does not depend on the weights); threads 1
# and 2; float32, and bf16 where oneDNN runs it natively.
#   bash scripts/bench_decode.sh                # this checkout's build/tapegpt
#   ROUNDS=5 bash scripts/bench_decode.sh
#   MODELS="2x128 gpt2" bash scripts/bench_decode.sh   # some of the models
#   BASE=/path/to/old/tapegpt bash scripts/bench_decode.sh   # also generation tokens/s, old against new
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench_lib.sh
ROUNDS="${ROUNDS:-3}"
MODELS="${MODELS:-2x128 4x128 6x384 gpt2}"
bench_use_tapegpt
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
head -c 300000 data/tinyshakespeare.txt > "$work/corpus.txt"
"$TAPEGPT" prepare --input "$work/corpus.txt" --out "$work/data" --tokenizer char >/dev/null
"$TAPEGPT" prepare --input "$work/corpus.txt" --out "$work/data-gpt2" --tokenizer gpt2 >/dev/null
prompt="$(head -c 5000 "$work/corpus.txt" | tail -c 256)"  # 256 characters
# 256 GPT-2 tokens: as many characters as make them (about 4 a token here).
gpt2_prompt="$(head -c 30000 "$work/corpus.txt" | tail -c 25000)"
n=256
while (( $("$TAPEGPT" tokenize --data "$work/data-gpt2" "${gpt2_prompt:0:$n}" | wc -w) < 256 )); do n=$((n + 64)); done
while (( $("$TAPEGPT" tokenize --data "$work/data-gpt2" "${gpt2_prompt:0:$n}" | wc -w) > 256 )); do n=$((n - 1)); done
gpt2_prompt="${gpt2_prompt:0:$n}"
precisions="fp32"
grep -qw avx512_bf16 /proc/cpuinfo && precisions="fp32 bf16"
echo "machine: $(bench_cpu_model), $(nproc) cores; rounds $ROUNDS; $(date -u '+%F %H:%M UTC'); commit $(bench_commit)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
ms() { sed -E "s/.*$1: [0-9]+ tokens in ([0-9.]+) ms.*/\1/"; }
for model in $MODELS; do
  case "$model" in
    2x128) L=2 H=2 C=128 data="$work/data" block=512 text="$prompt" ;;
    4x128) L=4 H=4 C=128 data="$work/data" block=512 text="$prompt" ;;
    6x384) L=6 H=6 C=384 data="$work/data" block=512 text="$prompt" ;;
    gpt2) L=12 H=12 C=768 data="$work/data-gpt2" block=512 text="$gpt2_prompt" ;;
    *) echo "bench_decode.sh: unknown model '$model' (2x128, 4x128, 6x384, gpt2)" >&2; exit 2 ;;
  esac
  run="$work/run_$model"
  "$TAPEGPT" train --data "$data" --out "$run" --n-layer "$L" --n-head "$H" --n-embd "$C" --block-size "$block" \
    --batch-size 1 --max-steps 1 --precision fp32 >/dev/null 2>&1
  for threads in 1 2; do
    for precision in $precisions; do
      for round in $(seq "$ROUNDS"); do
        read_line="$("$TAPEGPT" sample --ckpt "$run/ckpt.h5" --prompt "$text" --max-new-tokens 1 --threads "$threads" \
          --precision "$precision" 2>&1 >/dev/null | grep '^prompt:')"
        gen_line="$("$TAPEGPT" sample --ckpt "$run/ckpt.h5" --prompt F --max-new-tokens 256 --threads "$threads" \
          --precision "$precision" 2>&1 >/dev/null | grep '^prompt:')"
        echo "$model $threads $precision $(ms prompt <<< "$read_line") $(ms prompt <<< "$gen_line") $(ms generated <<< "$gen_line")" >> "$work/times"
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
print("| model | threads | precision | read 256 ms | read 1 ms (first token) | read 1 + generate 256 ms "
      "| ratio (median of rounds) |")
print("|---|---:|---|---:|---:|---:|---:|")
for (model, threads, precision), rs in rows.items():
    read = statistics.median(r[0] for r in rs)
    first = statistics.median(r[1] for r in rs)
    gen = statistics.median(r[1] + r[2] for r in rs)
    ratio = statistics.median(r[0] / (r[1] + r[2]) for r in rs)
    print(f"| {model} | {threads} | {precision} | {read:.1f} | {first:.1f} | {gen:.1f} | {ratio:.2f} |")
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
