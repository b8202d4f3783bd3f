#!/usr/bin/env bash
# `tapegpt train --budget` beyond one process, a fresh model and a small
# corpus (issue 50), each part against its alternative given the same
# minutes; every best.h5 scored by `tapegpt eval --precision fp32` on the
# whole of val.bin. The runs go one after another, never at once.
#   --part large     the kernel's C files (scripts/large_corpus.sh, 128 MB, byte tokenizer): the plan's
#                    shape (--budget) against the ladder's neighbouring rungs given the same budget
#                    (their shape, context and batch as flags; the rest planned alike); 3 runs of
#                    --large-minutes (default 30)
#   --part mpi       Tiny Shakespeare (char): mpirun -np 2, --threads 1 each, against one process on
#                    --threads 1, the same --budget (--minutes, default 5)
#   --part finetune  a model trained on the kernel's C files (--budget 5m, the same corpus as large,
#                    cut to 32 MB) fine-tuned on the C headers of libc6-dev (budget_corpora.sh
#                    c-headers-bytes, byte tokenizer: the held-out corpus, which the fine-tuning plan
#                    was not tuned on) with --init-from and --budget, against the fixed fine-tuning
#                    defaults given the same minutes (--init-from with --budget-fit steps), and
#                    against --budget from scratch
#   --part all       the three (about two hours at the defaults)
#   --out DIR        corpora, runs, logs and results.md there (default: a new temp dir)
#   THREADS=N        threads of the large and finetune runs (default 2, the developers' machine)
#   TAPEGPT=PATH     that binary (default build/tapegpt, built in Release)
# Prints and writes OUT/results.md: part, arm, wall seconds, val loss, bits per byte, with the CPU,
# the commit and the load average before and after each part.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench_lib.sh

usage_error() { echo "bench_budget_everywhere.sh: $1 (see bash scripts/bench_budget_everywhere.sh --help)" >&2; exit 2; }
parts=() out_dir="" minutes=5 large_minutes=30
while (( $# )); do
  case "$1" in
    --part) case "${2:-}" in large|mpi|finetune) parts+=("$2") ;; all) parts+=(large mpi finetune) ;;
              *) usage_error "--part must be large, mpi, finetune or all" ;; esac; shift ;;
    --out) out_dir="${2:?--out needs a directory}"; shift ;;
    --minutes) minutes="${2:?--minutes needs a number}"; shift ;;
    --large-minutes) large_minutes="${2:?--large-minutes needs a number}"; shift ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage_error "unknown argument '$1'" ;;
  esac
  shift
done
(( ${#parts[@]} )) || usage_error "give --part large, mpi, finetune or all"
THREADS="${THREADS:-2}"
bench_use_tapegpt
WORK="${out_dir:-$(mktemp -d)}"
mkdir -p "$WORK/runs"
RESULTS="$WORK/results.md"
{
  echo "# bench_budget_everywhere.sh ${parts[*]}"
  echo "commit $(bench_commit), $(bench_cpu_model), $(nproc) cores; large and finetune runs on $THREADS threads"
  echo
  echo "| part | arm | wall s | val loss | bits per byte |"
  echo "|---|---|---|---|---|"
} > "$RESULTS"

now() { date +%s.%N; }
seconds_between() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# score RUNDIR DATA: "loss | bits per byte" of RUNDIR/best.h5 on all of DATA/val.bin, float32.
score() {
  local json
  if [[ -f "$1/best.h5" ]] &&
     json="$(env -u OMP_NUM_THREADS "$TAPEGPT" eval --ckpt "$1/best.h5" --tokens "$2/val.bin" --precision fp32 \
             --json --threads "$(nproc)" 2>>"$1.log")"; then
    /usr/bin/python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print("%.4f | %.4f" % (r["loss"], r["bits_per_byte"]), end="")' "$json"
  else
    printf -- '- | -'
  fi
}

# run_dir PART NAME: the arm's run directory, its name with every character but letters, digits, dots and
# dashes made "_".
run_dir() { echo "$WORK/runs/$1-$(printf '%s' "$2" | tr -c 'A-Za-z0-9.-' '_')"; }

# arm PART NAME DATA -- COMMAND...: runs COMMAND (its output to RUNDIR.log), times it whole, scores
# RUNDIR/best.h5 and appends the row (RUNDIR: run_dir PART NAME).
arm() {
  local part="$1" name="$2" data="$3" dir t0 t1 rc=0
  dir="$(run_dir "$1" "$2")"
  shift 4
  echo "== $part, $name: $*" >&2
  t0="$(now)"
  env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS -u OMP_WAIT_POLICY "$@" --out "$dir" --overwrite > "$dir.log" 2>&1 || rc=$?
  t1="$(now)"
  local row="| $part | $name | $(seconds_between "$t0" "$t1")$( ((rc)) && echo " (exit $rc)") | $(score "$dir" "$data") |"
  echo "$row" | tee -a "$RESULTS" >&2
  grep '^budget: ' "$dir.log" | sed 's/^/     /' >&2 || true
}

# The ladder of train/budget/plan.cpp (kLadder, ladder_context, ladder_batch): layers, width, context, batch.
LADDER=("2 128 128 24" "4 128 128 24" "4 192 128 24" "4 256 128 24" "6 256 256 16" "6 384 256 16"
        "8 512 256 16" "12 768 256 16")
rung_flags() {
  local l w t b
  read -r l w t b <<< "${LADDER[$1]}"
  echo "--n-layer $l --n-embd $w --n-head $((w / 64)) --block-size $t --batch-size $b"
}

load() { cut -d' ' -f1-3 /proc/loadavg; }

for part in "${parts[@]}"; do
  echo "load average before $part: $(load)" >> "$RESULTS"
  case "$part" in
    large)
      [[ -d "$WORK/kernel-c" ]] || bash scripts/large_corpus.sh "$WORK" 128 >&2
      data="$WORK/kernel-c"
      arm large "plan" "$data" -- "$TAPEGPT" train --data "$data" --budget "${large_minutes}m" --threads "$THREADS"
      rung="$(grep -o 'ladder rung [0-9]*' "$(run_dir large plan).log" | awk '{print $3 - 1}')"
      [[ -n "$rung" ]] || { echo "bench_budget_everywhere.sh: the plan's run chose no ladder rung (see $(run_dir large plan).log)" >&2; exit 1; }
      read -r l w _ _ <<< "${LADDER[$rung]}"
      grep -q "model: $l layers x $w wide" "$(run_dir large plan).log" ||
        { echo "bench_budget_everywhere.sh: LADDER here differs from train/budget/plan.cpp's kLadder" >&2; exit 1; }
      for r in $((rung - 1)) $((rung + 1)); do
        (( r >= 0 && r < ${#LADDER[@]} )) || continue
        # shellcheck disable=SC2046  # the flags split into words
        arm large "rung $((r + 1)) (${LADDER[$r]% * *})" "$data" -- "$TAPEGPT" train --data "$data" \
          --budget "${large_minutes}m" --threads "$THREADS" $(rung_flags "$r")
      done ;;
    mpi)
      [[ -d "$WORK/shakespeare-char" ]] || bash scripts/budget_corpora.sh "$WORK" shakespeare-char >&2
      data="$WORK/shakespeare-char"
      arm mpi "2 processes x 1 thread" "$data" -- mpirun -np 2 --oversubscribe --bind-to none "$TAPEGPT" train \
        --data "$data" --budget "${minutes}m" --threads 1
      arm mpi "1 process x 1 thread" "$data" -- "$TAPEGPT" train --data "$data" --budget "${minutes}m" --threads 1 ;;
    finetune)
      [[ -d "$WORK/c-headers-bytes" ]] || bash scripts/budget_corpora.sh "$WORK" c-headers-bytes >&2
      [[ -d "$WORK/kernel-c-32" ]] || {
        bash scripts/large_corpus.sh "$WORK/k32" 32 >&2 && mv "$WORK/k32/kernel-c" "$WORK/kernel-c-32"; }
      base_name="base: kernel C, 5 min from scratch"
      base="$(run_dir finetune "$base_name")"
      [[ -f "$base/ckpt.h5" ]] || arm finetune "$base_name" "$WORK/kernel-c-32" -- \
        "$TAPEGPT" train --data "$WORK/kernel-c-32" --budget 5m --threads "$THREADS"
      data="$WORK/c-headers-bytes"
      arm finetune "--init-from --budget ${minutes}m" "$data" -- "$TAPEGPT" train --init-from "$base/ckpt.h5" \
        --data "$data" --budget "${minutes}m" --threads "$THREADS"
      arm finetune "--init-from, defaults fitted (--budget-fit steps)" "$data" -- "$TAPEGPT" train \
        --init-from "$base/ckpt.h5" --data "$data" --budget "${minutes}m" --budget-fit steps --threads "$THREADS"
      arm finetune "from scratch --budget ${minutes}m" "$data" -- "$TAPEGPT" train --data "$data" \
        --budget "${minutes}m" --threads "$THREADS" ;;
  esac
  echo "load average after $part: $(load)" >> "$RESULTS"
  echo >> "$RESULTS"
done
cat "$RESULTS"
