#!/usr/bin/env bash
# How good a model `tapegpt train --budget` gets in the minutes it is given,
# against tapegpt's default flags given the same wall time (--budget-fit
# steps: the defaults' model and optimizer, only the steps and the schedule
# fitted to the budget). For each corpus (scripts/budget_corpora.sh) and
# budget, both arms run one after the other on --threads $THREADS; each
# command's whole wall time is timed here (date around it); best.h5 is
# scored by `tapegpt eval --precision fp32` on the whole of val.bin (the
# same float32 forward for every arm, whatever precision it trained in).
# Prints, and writes to OUT/budget.md, a table: corpus, budget, arm, wall
# seconds (and ÷ budget), validation loss, bits per byte, and --budget's
# bits per byte ÷ the other arm's (the issue's target: at most 0.90 against
# the defaults), with the CPU, its bf16 flags, the load average before and
# after, and the commit; draws OUT/loss-vs-minutes-Nm.svg (`tapegpt plot
# --x-axis minutes`) per budget. Scoring adds a few seconds to each run.
#   bash scripts/bench_budget.sh                 # 5 min on the four tuning corpora, Shakespeare char
#                                                # also at 1 min: about 45 minutes
#   bash scripts/bench_budget.sh --quick         # 1 min, shakespeare-char and python-bytes, both arms:
#                                                # about 5 minutes; checks the script (CTest bench_budget_quick)
#   bash scripts/bench_budget.sh --minutes 1,5,30 --torch   # Shakespeare char's budgets; PyTorch beside it
#   bash scripts/bench_budget.sh --held-out      # also the held-out corpus c-headers-bytes (only at the end!)
#   --corpora LIST    comma-separated, from shakespeare-char, shakespeare-gpt2, python-bytes, fortunes-bpe
#   --minutes LIST    Shakespeare char's budgets in minutes (default 1,5; the other corpora get 5)
#   --torch           on shakespeare-char also nanoGPT's CPU recipe in PyTorch, fitted to the same wall time
#                     (scripts/time_to_loss.py torch --budget-s; same threads and OpenBLAS core as tapegpt;
#                     under bf16 autocast where the CPU has avx512_bf16 or amx_bf16, as tapegpt's auto does)
#   --no-defaults     leave out the defaults arm (e.g. Shakespeare's 30 minutes beside PyTorch only: an hour, not 1.5)
#   --out DIR         keep corpora, runs, budget.md, results.tsv and the plots there (default: a new temp dir)
#   THREADS=2         threads of every run (default 2, the developers' machine)
#   TAPEGPT=PATH      that binary (default build/tapegpt, built in Release)
#   TG_BUDGET_STANDIN="--max-steps 30"   a dry run of the script's flow: these flags replace --budget and
#                     --budget-fit in both arms (the table then says nothing about --budget)
# --quick exits 1 when any run fails, leaves no best.h5 or runs past its budget × 1.10 + 10 s; the full run
# checks the same without the 10 s and still prints and writes the whole table first. The runs go one after
# another, never at once; only the ratios of one invocation mean anything on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench_lib.sh

TUNING_CORPORA=(shakespeare-char shakespeare-gpt2 python-bytes fortunes-bpe)
HELD_OUT="c-headers-bytes"
usage_error() { echo "bench_budget.sh: $1 (see bash scripts/bench_budget.sh --help)" >&2; exit 2; }

quick=0 held_out=0 torch=0 defaults_arm=1 out_dir="" corpora_arg="" minutes_arg=""
while (( $# )); do
  case "$1" in
    --quick) quick=1 ;;
    --held-out) held_out=1 ;;
    --torch) torch=1 ;;
    --no-defaults) defaults_arm=0 ;;
    --out) out_dir="${2:?--out needs a directory}"; shift ;;
    --corpora) corpora_arg="${2:?--corpora needs a list}"; shift ;;
    --minutes) minutes_arg="${2:?--minutes needs a list}"; shift ;;
    -h|--help) sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage_error "unknown argument '$1'" ;;
  esac
  shift
done
THREADS="${THREADS:-2}"
STANDIN="${TG_BUDGET_STANDIN:-}"

if (( quick )); then
  corpora=(shakespeare-char python-bytes)
  other_minutes=1 shakespeare_minutes=(1)
  if (( torch )); then usage_error "--quick runs no PyTorch; leave out --torch"; fi
else
  corpora=("${TUNING_CORPORA[@]}")
  other_minutes=5 shakespeare_minutes=(1 5)
fi
if [[ -n "$corpora_arg" ]]; then IFS=, read -r -a corpora <<< "$corpora_arg"; fi
if [[ -n "$minutes_arg" ]]; then IFS=, read -r -a shakespeare_minutes <<< "$minutes_arg"; fi
if (( held_out )) && [[ " ${corpora[*]} " != *" $HELD_OUT "* ]]; then corpora+=("$HELD_OUT"); fi
for c in "${corpora[@]}"; do
  [[ " ${TUNING_CORPORA[*]} " == *" $c "* || ( "$c" == "$HELD_OUT" && $held_out == 1 ) ]] ||
    usage_error "unknown corpus '$c'; the corpora are ${TUNING_CORPORA[*]} (and $HELD_OUT with --held-out)"
done
for m in "${shakespeare_minutes[@]}"; do
  [[ "$m" =~ ^[1-9][0-9]*$ ]] || usage_error "--minutes takes whole minutes, comma-separated (got '$m')"
done
if (( torch )) && ! /usr/bin/python3 -c "import torch, h5py" 2>/dev/null; then
  echo "bench_budget.sh: --torch needs PyTorch and h5py for /usr/bin/python3 (TAPEGPT_WITH_TORCH=1 scripts/setup.sh)" >&2
  exit 2
fi

if [[ -n "$out_dir" ]]; then mkdir -p "$out_dir"; WORK="$(cd "$out_dir" && pwd)"; else WORK="$(mktemp -d)"; fi
bench_use_tapegpt
tapegpt_abs="$(realpath "$TAPEGPT")"
mkdir -p "$WORK/runs"
: > "$WORK/results.tsv"

# The jobs: "corpus minutes", Shakespeare char at each of its budgets.
jobs=()
for c in "${corpora[@]}"; do
  if [[ "$c" == shakespeare-char ]]; then
    for m in "${shakespeare_minutes[@]}"; do jobs+=("$c $m"); done
  else
    jobs+=("$c $other_minutes")
  fi
done

echo "== corpora (scripts/budget_corpora.sh)" >&2
bash scripts/budget_corpora.sh "$WORK/corpora" "${corpora[@]}" | tee "$WORK/corpora.txt" >&2

cpu_flags="$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx512_bf16|amx_bf16|amx_tile|avx512f)$' |
             sort | xargs || true)"
{
  echo "machine: $(bench_cpu_model), $(nproc) cores; bf16-relevant flags: ${cpu_flags:-none}"
  echo "commit: $(bench_commit); $(date -u '+%F %H:%M UTC'); threads $THREADS; tapegpt $TAPEGPT"
  if [[ -n "$STANDIN" ]]; then echo "DRY RUN: '$STANDIN' replaced --budget and --budget-fit (TG_BUDGET_STANDIN)"; fi
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$WORK/header.txt"
cat "$WORK/header.txt" >&2

now() { date +%s.%N; }
seconds_between() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# eval_best RUNDIR DATA: "loss<TAB>bits_per_byte" of RUNDIR/best.h5 on the whole of DATA/val.bin, or "-<TAB>-";
# in float32 for every arm, so that the scoring is the same whatever precision a run trained in.
eval_best() {
  local json
  if [[ -f "$1/best.h5" ]] &&
     json="$(bench_run_tapegpt "$TAPEGPT" eval --ckpt "$1/best.h5" --tokens "$2/val.bin" --precision fp32 --json \
             2>>"$1.log")"; then
    /usr/bin/python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(r["loss"], r["bits_per_byte"], sep="\t", end="")' \
      "$json"
  else
    printf -- '-\t-'
  fi
}

# record CORPUS MINUTES ARM RUNDIR DATA WALL RC NOTE: one row of results.tsv.
record() {
  local best=0 scores
  [[ -f "$4/best.h5" ]] && best=1
  scores="$(eval_best "$4" "$5")"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$6" "$7" "$best" "$scores" "$8" >> "$WORK/results.tsv"
  echo "   $3: wall $6 s, exit $7, val loss / bits per byte: ${scores/$'\t'/ / }" >&2
}

# run_tapegpt_arm CORPUS MINUTES ARM: `tapegpt train --budget` (arm budget)
# or with --budget-fit steps (arm defaults), timed whole.
run_tapegpt_arm() {
  local corpus="$1" minutes="$2" arm="$3" data="$WORK/corpora/$1" dir="$WORK/runs/$1-$2m-$3" rc=0 t0 t1
  local flags=(--budget "${minutes}m")
  if [[ "$arm" == defaults ]]; then flags+=(--budget-fit steps); fi
  if [[ -n "$STANDIN" ]]; then read -r -a flags <<< "$STANDIN"; fi
  echo "== $corpus, $minutes min, $arm: tapegpt train ${flags[*]}" >&2
  t0="$(now)"
  bench_run_tapegpt "$TAPEGPT" train --data "$data" --out "$dir" "${flags[@]}" --overwrite > "$dir.log" 2>&1 || rc=$?
  t1="$(now)"
  if (( rc )); then echo "   failed (exit $rc); the end of $dir.log:" >&2; tail -5 "$dir.log" >&2; fi
  if [[ ! -f "$dir/ckpt.h5" || ! -f "$dir/metrics.jsonl" ]]; then
    echo "   $dir lacks ckpt.h5 or metrics.jsonl" >&2
    if (( rc == 0 )); then rc=1; fi  # counted as a failure in the table
  fi
  made+=("$minutes $dir")
  record "$corpus" "$minutes" "$arm" "$dir" "$data" "$(seconds_between "$t0" "$t1")" "$rc" ""
}

# run_torch_arm MINUTES: nanoGPT's CPU recipe in PyTorch on shakespeare-char,
# its max_iters fitted to the same wall time by a probe that counts
# (scripts/time_to_loss.py), set up as scripts/bench.sh's fair baseline.
run_torch_arm() {
  local minutes="$1" data="$WORK/corpora/shakespeare-char" dir="$WORK/runs/shakespeare-char-$1m-pytorch" rc=0 t0 t1
  rm -rf "$dir"
  echo "== shakespeare-char, $minutes min, pytorch: nanoGPT's CPU recipe, max_iters fitted" >&2
  t0="$(now)"
  "${torch_env[@]}" /usr/bin/python3 scripts/time_to_loss.py torch --data "$data" --out "$dir" --threads "$THREADS" \
    --budget-s "$((minutes * 60))" --started-at "$t0" --save "$dir/ckpt.pt" "${torch_precision[@]}" > "$dir.log" 2>&1 ||
    rc=$?
  t1="$(now)"
  # The wall time ends here: converting and scoring are not the run's.
  if (( rc == 0 )); then
    /usr/bin/python3 scripts/nanogpt_to_h5.py "$dir/ckpt.pt" "$dir/best.h5" --tokenizer-from "$data/tokenizer.json" \
      --gelu erf >> "$dir.log" 2>&1 || rc=$?
  fi
  if (( rc )); then echo "   failed (exit $rc); the end of $dir.log:" >&2; tail -5 "$dir.log" >&2; fi
  made+=("$minutes $dir")
  local plan
  plan="$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))
early = ", stopped early at %d" % r["stopped_early_at"] if "stopped_early_at" in r else ""
print("%s, max_iters %s%s" % (r.get("dtype", "?"), r.get("max_iters", "?"), early))' \
           "$dir/run.json" 2>/dev/null || echo "max_iters ?")"
  record shakespeare-char "$minutes" pytorch "$dir" "$data" "$(seconds_between "$t0" "$t1")" "$rc" \
    "nanoGPT CPU recipe, $plan"
}

if (( torch )); then
  blas_lib="$(bench_blas_lib)"
  core="$(bench_run_tapegpt "$TAPEGPT" bench --shape S --block-size 8 --batch-size 1 --steps 1 --warmup 0 \
          --sample-tokens 0 --no-profile --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["blas_core"])')"
  bench_fair_torch_env "$core" "$blas_lib" "$THREADS" "${TORCH_WAIT_POLICY:-PASSIVE}"
  # The careful PyTorch user's precision: autocast to bf16 where the CPU runs bf16 natively (on Zen 4 it
  # trains nanoGPT's recipe faster than float32: BENCHMARKS.md, time to loss), float32 elsewhere.
  torch_precision=()
  if [[ " $cpu_flags " == *" avx512_bf16 "* || " $cpu_flags " == *" amx_bf16 "* ]]; then torch_precision=(--bf16); fi
  echo "PyTorch: $("${torch_env[@]}" /usr/bin/python3 -c 'import torch; print(torch.__version__)'); ${torch_env[*]:1}" \
    >> "$WORK/header.txt"
fi

made=()  # "minutes rundir" of every run made here, for the plots
for job in "${jobs[@]}"; do
  read -r corpus minutes <<< "$job"
  run_tapegpt_arm "$corpus" "$minutes" budget
  if (( defaults_arm )); then run_tapegpt_arm "$corpus" "$minutes" defaults; fi
  if (( torch )) && [[ "$corpus" == shakespeare-char ]]; then run_torch_arm "$minutes"; fi
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$WORK/header.txt"

# One plot per budget: validation loss against wall minutes, every run of that budget.
for m in $(for job in "${jobs[@]}"; do echo "${job#* }"; done | sort -nu); do
  dirs=()  # relative to runs/: the legend shows the run's name
  for entry in "${made[@]}"; do
    d="${entry#* }"
    if [[ "${entry%% *}" == "$m" && -s "$d/metrics.jsonl" ]]; then dirs+=("$(basename "$d")"); fi
  done
  if (( ${#dirs[@]} )); then
    (cd "$WORK/runs" && "$tapegpt_abs" plot "${dirs[@]}" --x-axis minutes --out "../loss-vs-minutes-${m}m.svg" \
       --overwrite >/dev/null)
  fi
done

echo >&2
status=0
/usr/bin/python3 scripts/budget_table.py "$WORK/results.tsv" --header "$WORK/header.txt" --md "$WORK/budget.md" \
  --slack-s "$(( quick ? 10 : 0 ))" || status=$?
echo "corpora, runs, results.tsv, budget.md and loss-vs-minutes-*.svg in $WORK" >&2
exit "$status"
