#!/usr/bin/env bash
# prepare on generated corpora: time, peak memory (RSS) and MB/s, to show
# memory flat and time linear in the corpus size, and GPT-2 MB/s per thread
# count. Corpora are made in a temporary directory under /tmp (TMPDIR) and
# deleted on exit, whatever happens.
#   scripts/bench_prepare.sh                    # 50 MB, 500 MB and 2 GB
#   SIZES="50 500" scripts/bench_prepare.sh     # sizes in MB
#   BASE=/path/to/old/tapegpt scripts/bench_prepare.sh   # also time an older build on 50 MB
#
# "english": lines of data/tinyshakespeare.txt drawn at random (seed 13)
# into a 50 MB file; larger corpora are copies of it, so their words repeat
# like real English does (the chunk cache hits most of them).
# "random": random lower-case "words" of 1-9 letters, nearly all distinct:
# the cache misses, the worst case for GPT-2 encoding.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench_lib.sh
[[ -x build/tapegpt ]] || scripts/build.sh >/dev/null
T="$PWD/build/tapegpt"
SIZES="${SIZES:-50 500 2000}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/tapegpt_bench_prepare.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

gen() {  # gen MB FILE english|random
  awk -v target="$(($1 * 1000000))" -v mode="$3" 'BEGIN { srand(13) } { lines[n++] = $0 } END {
    size = 0
    while (size < target) {
      if (mode == "english") { l = lines[int(rand() * n)] }
      else { l = ""; k = int(rand() * 12) + 1
             for (i = 0; i < k; i++) { w = ""; m = int(rand() * 9) + 1
               for (j = 0; j < m; j++) w = w sprintf("%c", 97 + int(rand() * 26)); l = l (i ? " " : "") w } }
      print l; size += length(l) + 1
    }
  }' data/tinyshakespeare.txt > "$2"
}

# run LABEL BYTES CMD...: one line with wall and CPU seconds, MB/s, peak RSS.
run() {
  local label="$1" bytes="$2"
  shift 2
  /usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$@" > "$WORK/log" 2>&1 || { cat "$WORK/log"; exit 1; }
  read -r wall user sys rss < "$WORK/time"
  awk -v l="$label" -v b="$bytes" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" 'BEGIN {
    printf "%-34s %8.0f MB  wall %7.2f s  cpu %7.2f s  %6.1f MB/s (wall)  %6.1f MB/cpu-s  peak RSS %6.0f MiB\n",
           l, b / 1e6, w, u + s, b / 1e6 / w, b / 1e6 / (u + s), r / 1024 }'
}

echo "machine: $(bench_cpu_model), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB"
echo "commit: $(bench_commit); $(date -u '+%F %H:%M UTC'); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
gen 50 "$WORK/english-50.txt" english
gen 50 "$WORK/random-50.txt" random

echo "== gpt2, all threads, by corpus size (memory should stay flat, time grow linearly)"
for mb in $SIZES; do
  f="$WORK/english-$mb.txt"
  if [[ ! -f "$f" ]]; then
    for _ in $(seq $((mb / 50))); do cat "$WORK/english-50.txt"; done > "$f"
  fi
  run "prepare gpt2 english $mb MB" "$(stat -c %s "$f")" "$T" prepare --input "$f" --tokenizer gpt2 --out "$WORK/out"
  rm -rf "$WORK/out"
  if [[ -n "${BASE:-}" && "$mb" -le 500 ]]; then  # the old build holds the corpus in memory: not at 2 GB
    run "BASE prepare gpt2 english $mb MB" "$(stat -c %s "$f")" "$BASE" prepare --input "$f" --tokenizer gpt2 --out "$WORK/out"
    rm -rf "$WORK/out"
  fi
  [[ "$mb" == 50 ]] || rm -f "$f"
done

echo "== gpt2 by thread count, 50 MB"
for t in 1 2; do
  run "prepare gpt2 english --threads $t" 50000000 "$T" prepare --input "$WORK/english-50.txt" --tokenizer gpt2 --threads "$t" --out "$WORK/out"
  run "prepare gpt2 random --threads $t" 50000000 "$T" prepare --input "$WORK/random-50.txt" --tokenizer gpt2 --threads "$t" --out "$WORK/out"
done
if [[ -n "${BASE:-}" ]]; then
  run "BASE prepare gpt2 english (1 thread)" 50000000 "$BASE" prepare --input "$WORK/english-50.txt" --tokenizer gpt2 --out "$WORK/out-base"
  run "BASE prepare gpt2 random (1 thread)" 50000000 "$BASE" prepare --input "$WORK/random-50.txt" --tokenizer gpt2 --out "$WORK/out-base-r"
  cmp -s "$WORK/out/train.bin" "$WORK/out-base-r/train.bin" && cmp -s "$WORK/out/val.bin" "$WORK/out-base-r/val.bin" \
    && echo "BASE and this build wrote identical train.bin and val.bin (random corpus)"
fi

echo "== other tokenizers, 50 MB english"
for tok in byte char bpe; do
  run "prepare $tok" 50000000 "$T" prepare --input "$WORK/english-50.txt" --tokenizer "$tok" --out "$WORK/out"
  grep -o 'train.bin [0-9]* tokens' "$WORK/log"
done
echo "== bpe (vocab 1024): cost of a bounded chunk table (fewer train tokens = better compression)"
for corpus in english random; do
  for chunks in 1048576 65536 8192 1024; do
    run "bpe $corpus --bpe-max-chunks $chunks" 50000000 "$T" prepare --input "$WORK/$corpus-50.txt" --tokenizer bpe --bpe-max-chunks "$chunks" --out "$WORK/out"
    grep -o 'train.bin [0-9]* tokens' "$WORK/log"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
