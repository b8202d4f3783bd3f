#!/usr/bin/env bash
# Side-by-side CPU benchmark: tapegpt's training step against the same step
# written by a careful PyTorch user (scripts/bench_torch.py: nanoGPT's model
# and optimizer), on the S, M and G shapes, in one run on one machine, with
# OpenBLAS's own sgemm rate measured in the same run as the ceiling.
#   bash scripts/bench.sh                   # S, M, G; 3 rounds; all cores
#   bash scripts/bench.sh --out DIR         # also keep DIR/summary.{md,json} and the raw JSON lines
#   bash scripts/bench.sh --quick           # S, 1 round, 2 steps: checks the script end to end (no figures)
#   SHAPES="S M" ROUNDS=5 THREADS=2 bash scripts/bench.sh
#   TAPEGPT=/path/to/tapegpt bash scripts/bench.sh   # that binary instead of building build/tapegpt
#   bash scripts/bench.sh --blas-builds     # another measurement: scripts/bench_blas_builds.sh
# Only ratios from one run mean anything (the machines are shared and
# noisy); the summary (scripts/bench_summary.py) prints them per round.
#
# What makes the baseline fair, and why each setting:
#  - Same OpenBLAS file. Debian's python3-torch calls sgemm through
#    libblas.so.3 / libopenblas.so.0 as the alternatives system points them;
#    tapegpt loads the OpenMP build through its RUNPATH. PyTorch gets
#    LD_LIBRARY_PATH=<the directory of the libopenblas tapegpt loads (ldd)>,
#    and each side reports the library it really mapped (summary: "fair").
#  - Same kernels. Debian's OpenBLAS 0.3.21 falls back to its SSE3
#    "Prescott" kernels on CPUs it does not recognise; tapegpt then selects
#    better ones itself (Note [OpenBLAS core detection]). PyTorch gets
#    OPENBLAS_CORETYPE=<the core tapegpt's OpenBLAS reports>, read from
#    tapegpt at the start of the run, as a user who knew would set it. Both
#    run with OPENBLAS_VERBOSE=2, so OpenBLAS itself prints "Core: ..." for
#    each side, next to openblas_get_corename() asked by each process.
#  - Same threads. tapegpt --threads N; PyTorch torch.set_num_threads(N),
#    OMP_NUM_THREADS=N (the OpenMP build's sgemm follows OpenMP's count) and
#    OPENBLAS_NUM_THREADS=N (which would size a pthread build's pool).
#  - Each side's best OpenMP wait. PyTorch runs backward on its autograd
#    thread, whose OpenMP team is not the main thread's (forward, optimizer):
#    with the default spinning wait, one team's idle workers burn the cores
#    the other team needs. OMP_WAIT_POLICY=PASSIVE (idle workers sleep) is
#    what a careful user sets; TORCH_WAIT_POLICY=ACTIVE (or =default: the
#    variable unset) shows what it is worth. tapegpt runs every parallel
#    loop from one thread, one team, whose spinning workers only wait for
#    that team's next loop, so it keeps OpenMP's default wait
#    (TAPEGPT_WAIT_POLICY=PASSIVE tries the other); its environment has
#    OMP_WAIT_POLICY, OMP_NUM_THREADS and OPENBLAS_NUM_THREADS cleared so
#    --threads alone decides.
#  - Same work, timed the same way: shapes, batch, random tokens, a whole
#    step (forward, loss, backward, clip 1.0, AdamW, zeroing), STEPS timed
#    after WARMUP untimed, median; peak RSS of each process; greedy KV-cache
#    sampling at batch 1 after a 16-token prompt.
#  - Alternation. Each round measures OpenBLAS's own sgemm rate (tapegpt
#    bench --sgemm-rate, and torch.mm as a check), then each shape with
#    tapegpt and PyTorch back to back, the order flipped every round, so a
#    change in the machine's load hits both sides alike.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == --blas-builds ]]; then
  exec bash scripts/bench_blas_builds.sh
fi
out_dir=""
quick=0
while (( $# )); do
  case "$1" in
    --quick) quick=1 ;;
    --out) out_dir="${2:?--out needs a directory}"; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown argument '$1' (see bash scripts/bench.sh --help)" >&2; exit 2 ;;
  esac
  shift
done
if (( quick )); then
  SHAPES="${SHAPES:-S}" ROUNDS="${ROUNDS:-1}" STEPS="${STEPS:-2}" WARMUP="${WARMUP:-1}" SAMPLE_TOKENS="${SAMPLE_TOKENS:-8}"
fi
SHAPES="${SHAPES:-S M G}"
ROUNDS="${ROUNDS:-3}"
STEPS="${STEPS:-10}"
WARMUP="${WARMUP:-3}"
SAMPLE_TOKENS="${SAMPLE_TOKENS:-64}"
THREADS="${THREADS:-$(nproc)}"
TORCH_WAIT_POLICY="${TORCH_WAIT_POLICY:-PASSIVE}"
TAPEGPT_WAIT_POLICY="${TAPEGPT_WAIT_POLICY:-default}"

if [[ -z "${TAPEGPT:-}" ]]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build --target tapegpt -j"$(nproc)" >/dev/null
  TAPEGPT=build/tapegpt
fi
if [[ -n "$out_dir" ]]; then
  mkdir -p "$out_dir/raw"
  RAW="$out_dir/raw"
  rm -f "$RAW"/*.jsonl "$RAW"/*.err
else
  RAW="$(mktemp -d)"
  trap 'rm -rf "$RAW"' EXIT
fi

# tapegpt with only --threads deciding its threads, and its own defaults.
tapegpt_wait=()
[[ "$TAPEGPT_WAIT_POLICY" != default ]] && tapegpt_wait=(OMP_WAIT_POLICY="$TAPEGPT_WAIT_POLICY")
tapegpt() {
  env -u OMP_WAIT_POLICY -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS "${tapegpt_wait[@]}" OPENBLAS_VERBOSE=2 \
    "$TAPEGPT" "$@" --threads "$THREADS"
}
# Runs a command, appending its JSON line to RAW/NAME.jsonl and its stderr
# (OpenBLAS's "Core:" line) to RAW/NAME.err; shows the error if it fails.
record() {
  local name="$1"; shift
  if ! "$@" >> "$RAW/$name.jsonl" 2>> "$RAW/$name.err"; then
    echo "bench.sh: failed: $*" >&2
    tail -5 "$RAW/$name.err" >&2
    exit 1
  fi
}

commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
[[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]] && commit+="-dirty"
blas_lib="$(ldd "$TAPEGPT" | awk '$1 ~ /^libopenblas/ {print $3; exit}')"
[[ -n "$blas_lib" ]] || { echo "bench.sh: ldd finds no libopenblas in $TAPEGPT" >&2; exit 1; }
# Which core tapegpt's OpenBLAS runs (after its own correction), from a tiny step.
record probe tapegpt bench --shape S --block-size 8 --batch-size 1 --steps 1 --warmup 0 --sample-tokens 0 \
  --no-profile --json
core="$(/usr/bin/python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["blas_core"])' "$RAW/probe.jsonl")"

wait_policy=(OMP_WAIT_POLICY="$TORCH_WAIT_POLICY")
[[ "$TORCH_WAIT_POLICY" == default ]] && wait_policy=(-u OMP_WAIT_POLICY)
torch_env=(env "${wait_policy[@]}" OPENBLAS_CORETYPE="$core"
           LD_LIBRARY_PATH="$(dirname "$blas_lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
           OMP_NUM_THREADS="$THREADS" OPENBLAS_NUM_THREADS="$THREADS" OPENBLAS_VERBOSE=2)
have_torch=1
/usr/bin/python3 -c "import torch" 2>/dev/null || have_torch=0
torch_bench() { "${torch_env[@]}" /usr/bin/python3 scripts/bench_torch.py --threads "$THREADS" "$@"; }

{
  echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB"
  echo "commit: $commit; $(date -u '+%F %H:%M UTC'); threads $THREADS; rounds $ROUNDS; steps $STEPS after $WARMUP warm-up"
  echo "tapegpt: $TAPEGPT, OpenBLAS $blas_lib (ldd), core $core; ${tapegpt_wait[*]:-OMP_WAIT_POLICY unset}"
  if (( have_torch )); then
    echo "PyTorch: $("${torch_env[@]}" /usr/bin/python3 -c 'import torch; print(torch.__version__)' 2>/dev/null);" \
         "libtorch_cpu.so loads $("${torch_env[@]}" ldd "$(/usr/bin/python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))')" | awk '$1 ~ /^libopenblas/ {print $3}') (ldd)"
    echo "PyTorch environment: ${torch_env[*]:1}"
  else
    echo "PyTorch: not installed (/usr/bin/python3 cannot import torch): tapegpt alone"
  fi
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$RAW/header.txt"

for round in $(seq "$ROUNDS"); do
  echo "round $round of $ROUNDS ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))" >&2
  record sgemm-tapegpt tapegpt bench --sgemm-rate --json
  (( have_torch )) && record sgemm-torch torch_bench --sgemm-rate
  for shape in $SHAPES; do
    tg=(record "tapegpt-$shape" tapegpt bench --shape "$shape" --json --steps "$STEPS" --warmup "$WARMUP"
        --sample-tokens "$SAMPLE_TOKENS")
    pt=(record "torch-$shape" torch_bench --shape "$shape" --steps "$STEPS" --warmup "$WARMUP"
        --sample-tokens "$SAMPLE_TOKENS")
    if (( ! have_torch )); then "${tg[@]}"
    elif (( round % 2 )); then "${tg[@]}"; "${pt[@]}"
    else "${pt[@]}"; "${tg[@]}"
    fi
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$RAW/header.txt"

summary_args=("$RAW" --shapes "$SHAPES" --commit "$commit" --blas-lib "$blas_lib" --torch-wait-policy "$TORCH_WAIT_POLICY"
              --tapegpt-wait-policy "$TAPEGPT_WAIT_POLICY")
(( quick )) && summary_args+=(--quick)
[[ -n "$out_dir" ]] && summary_args+=(--json "$out_dir/summary.json" --md "$out_dir/summary.md")
echo
/usr/bin/python3 scripts/bench_summary.py "${summary_args[@]}"
