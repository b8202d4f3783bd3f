#!/usr/bin/env bash
# Side-by-side CPU benchmark: tapegpt's training step against the same step
# written by a careful PyTorch user (scripts/bench_torch.py: nanoGPT's model
# and optimizer), in float32 and under bf16 autocast, on the S, M and G
# shapes, in one run on one machine, with OpenBLAS's own sgemm rate and
# oneDNN's own bf16 matmul rate measured in the same run as the ceilings.
#   bash scripts/bench.sh                   # S, M, G and the budget's rungs 1-3; 3 rounds; all cores
#   bash scripts/bench.sh --out DIR         # also keep DIR/summary.{md,json} and the raw JSON lines
#   bash scripts/bench.sh --quick           # S, 1 round, 2 steps: checks the script end to end (no figures)
#   SHAPES="S M" ROUNDS=5 THREADS=2 bash scripts/bench.sh
#   TAPEGPT=/path/to/tapegpt bash scripts/bench.sh   # that binary instead of building build/tapegpt
#   PYTHON=/path/to/python3 bash scripts/bench.sh    # another Python with PyTorch (default /usr/bin/python3)
#   BF16_ANYWAY=1 ONEDNN_MAX_CPU_ISA=AVX512_CORE bash scripts/bench.sh --quick   # bf16 rows where bf16 is emulated: checks the script
#   bash scripts/bench.sh --blas-builds     # another measurement: scripts/bench_blas_builds.sh
#   TORCH2=0 bash scripts/bench.sh          # without PyTorch 2 from the forky folder
# Shapes rung1..rung3 are `tapegpt bench --budget-rung N` (the shapes train
# --budget picks, with its recipe: RoPE, RMSNorm, ReLU², no biases, Muon)
# against bench_torch.py --shape rungN (the same model and Muon in PyTorch).
# PyTorch 2 (Debian forky's python3-torch, in the folder of
# scripts/setup_forky.sh, run through scripts/in_forky.sh) runs beside
# Debian 12's 1.13 where that folder is there: float32 and bf16 autocast,
# each with and without F.scaled_dot_product_attention ("sdpa"), on copies
# of tapegpt's own OpenBLAS files (forky's torch links the reference BLAS,
# and a user who cared would give it OpenBLAS), under the same environment.
# Only ratios from one run mean anything (the machines are shared and
# noisy); the summary (scripts/bench_summary.py) prints them per round.
# bf16 is timed where oneDNN runs it natively (`tapegpt bench --bf16-rate`
# says bf16_native: its ISA is avx512_core_bf16, AVX512_BF16 as on an AMD
# Zen 4, or avx512_core_amx), and every bf16 figure is labelled with that
# ISA: a result for the CPUs that have it. Where oneDNN would emulate bf16
# nothing bf16 is timed (an emulated speed is never a result), and the run
# says "bf16 speed not measured here: ...". BF16_ANYWAY=1 times the bf16
# rows there all the same, to check the script; the summary labels each
# such figure "bf16 emulated: not a result".
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
#  - The bf16 peer. PyTorch's bf16 step is the float32 peer's step with the
#    forward and the loss under torch.autocast("cpu", dtype=torch.bfloat16)
#    (nanoGPT's ctx): its matmuls run in oneDNN, everything else as in the
#    float32 step, with the same threads (torch.set_num_threads and
#    OMP_NUM_THREADS size oneDNN's OpenMP team too) and the same OpenBLAS
#    environment as above. tapegpt's bf16 row is `tapegpt bench` on its
#    default flags (--precision auto) where bf16 is native (so the row also
#    shows that auto picks bf16 there; the targets table checks it), and
#    `--precision bf16` under BF16_ANYWAY=1 (its float32 rows pass
#    --precision fp32 where the binary has the flag). Both sides call the same
#    oneDNN file: Debian's python3-torch 1.13 links the system
#    libdnnl.so.2 (torch.__config__.show() reports "MKL-DNN v2.6.3", the
#    version of Debian's libdnnl2, which tapegpt loads too); each side
#    reports the file it mapped and which ISA oneDNN ran: tapegpt from
#    `tapegpt bench --bf16-rate` (oneDNN's effective ISA), PyTorch from the
#    `isa:` line oneDNN's verbose mode (ONEDNN_VERBOSE=1) prints during one
#    untimed step, with the kernel each matmul ran ("brg:avx512_core_bf16"
#    on the development machine's Zen 4; on AMX a name with "amx" in it);
#    the float32 step runs no oneDNN primitive. ONEDNN_VERBOSE and
#    DNNL_VERBOSE are cleared for both sides (oneDNN prints to stdout, where
#    the JSON goes); an ONEDNN_MAX_CPU_ISA cap applies to both. The bf16
#    rows sample nothing (sampling is the float32 rows'); tapegpt's bf16 row
#    keeps its kernel profile, which shows where a bf16 step's time goes
#    (attention sums in float32, reading v in bf16: whether it is worth
#    the tiles too).
#  - Alternation. Each round measures OpenBLAS's own sgemm rate (tapegpt
#    bench --sgemm-rate, and torch.mm as a check) and oneDNN's bf16 matmul
#    rate where bf16 runs: the best of tapegpt bench --bf16-rate (tapegpt's
#    kernels and oneDNN's own whole calls) and torch.mm in bfloat16, so no
#    slow reference flatters a step's share of it; then each shape with
#    each side back to back (tapegpt, PyTorch, PyTorch bf16 autocast,
#    tapegpt bf16), the order rotated by one every round, so a change in the
#    machine's load hits all sides alike.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench_lib.sh

if [[ "${1:-}" == --blas-builds ]]; then
  exec bash scripts/bench_blas_builds.sh
fi
out_dir=""
quick=0
while (( $# )); do
  case "$1" in
    --quick) quick=1 ;;
    --out) out_dir="${2:?--out needs a directory}"; shift ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown argument '$1' (see bash scripts/bench.sh --help)" >&2; exit 2 ;;
  esac
  shift
done
if (( quick )); then
  SHAPES="${SHAPES:-S}" ROUNDS="${ROUNDS:-1}" STEPS="${STEPS:-2}" WARMUP="${WARMUP:-1}" SAMPLE_TOKENS="${SAMPLE_TOKENS:-8}"
fi
SHAPES="${SHAPES:-S M G rung1 rung2 rung3}"
ROUNDS="${ROUNDS:-3}"
STEPS="${STEPS:-10}"
WARMUP="${WARMUP:-3}"
SAMPLE_TOKENS="${SAMPLE_TOKENS:-64}"
THREADS="${THREADS:-$(nproc)}"
TORCH_WAIT_POLICY="${TORCH_WAIT_POLICY:-PASSIVE}"
TAPEGPT_WAIT_POLICY="${TAPEGPT_WAIT_POLICY:-default}"
BF16_ANYWAY="${BF16_ANYWAY:-0}"
TORCH2="${TORCH2:-auto}"
# The Python with PyTorch (Debian's python3-torch; elsewhere another one:
# scripts/bench_elsewhere.sh).
PYTHON="${PYTHON:-/usr/bin/python3}"

bench_use_tapegpt
temporary=()  # removed at exit
trap 'rm -rf "${temporary[@]}"' EXIT
if [[ -n "$out_dir" ]]; then
  mkdir -p "$out_dir/raw"
  RAW="$out_dir/raw"
  rm -f "$RAW"/*.jsonl "$RAW"/*.err
else
  RAW="$(mktemp -d)"
  temporary+=("$RAW")
fi

# tapegpt with only --threads deciding its threads, and its own defaults.
tapegpt_wait=()
[[ "$TAPEGPT_WAIT_POLICY" != default ]] && tapegpt_wait=(OMP_WAIT_POLICY="$TAPEGPT_WAIT_POLICY")
tapegpt() {
  env -u OMP_WAIT_POLICY -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS -u ONEDNN_VERBOSE -u DNNL_VERBOSE \
    "${tapegpt_wait[@]}" OPENBLAS_VERBOSE=2 "$TAPEGPT" "$@" --threads "$THREADS"
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

commit="$(bench_commit)"
blas_lib="$(bench_blas_lib)"
# A binary from before --precision is float32 only; a newer one picks bf16
# by default where bf16 is native, so its float32 rows ask for float32.
fp32=()
has_precision=0
bench_help="$("$TAPEGPT" bench --help 2>/dev/null || true)"
[[ "$bench_help" == *--precision* ]] && has_precision=1 && fp32=(--precision fp32)
# Which core tapegpt's OpenBLAS runs (after its own correction), from a tiny step.
record probe tapegpt bench --shape S --block-size 8 --batch-size 1 --steps 1 --warmup 0 --sample-tokens 0 \
  --no-profile --json "${fp32[@]}"
core="$("$PYTHON" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["blas_core"])' "$RAW/probe.jsonl")"
dnnl_lib="$(bench_loaded_lib "$TAPEGPT" libdnnl)"

# bf16 is timed only where oneDNN runs it natively (AVX512_BF16 or AMX-BF16,
# not capped below them, built with oneDNN).
record probe-bf16 tapegpt bench --bf16-rate --json
read -r dnnl_isa native < <("$PYTHON" -c '
import json, sys
r = json.loads(open(sys.argv[1]).readline())
print(r["dnnl_isa"], int(r.get("bf16_native", r.get("amx_bf16", False))))' "$RAW/probe-bf16.jsonl") ||
  { echo "bench.sh: cannot read dnnl_isa and bf16_native from $TAPEGPT bench --bf16-rate --json" >&2; exit 1; }
cpu_amx=0
grep -qw amx_bf16 /proc/cpuinfo && cpu_amx=1
if (( native )); then
  bf16_note=""
else  # tapegpt's reason: bf16 emulated, or no oneDNN in the build, or a cap, ...
  bf16_note="$("$PYTHON" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["not_measured"])' \
               "$RAW/probe-bf16.jsonl")"
fi
bf16=$(( native || BF16_ANYWAY == 1 ))
# tapegpt's bf16 row needs --precision and oneDNN: where bf16 is native an
# older binary is an error (the row is what the run is for); under
# BF16_ANYWAY it is left out.
tapegpt_bf16_missing=""
if (( ! has_precision )); then tapegpt_bf16_missing="$TAPEGPT has no --precision flag (an older binary)"
elif [[ "$dnnl_isa" == none ]]; then tapegpt_bf16_missing="$TAPEGPT was built without oneDNN"
fi
tapegpt_bf16=0
(( bf16 )) && [[ -z "$tapegpt_bf16_missing" ]] && tapegpt_bf16=1
# Where bf16 is native tapegpt's bf16 row runs on its default flags
# (--precision auto), so the run also shows that auto picks bf16 there;
# BF16_ANYWAY=1 has to ask.
bf16_flag=()
(( native )) || bf16_flag=(--precision bf16)
bf16_rate_anyway=()
(( bf16 && ! native )) && [[ "$bench_help" == *--emulated* ]] && bf16_rate_anyway=(--emulated)
if (( native && ! has_precision )); then
  echo "bench.sh: $TAPEGPT has no --precision flag, which the bf16 row needs where bf16 is native: rebuild it" >&2
  exit 1
fi

bench_fair_torch_env "$core" "$blas_lib" "$THREADS" "$TORCH_WAIT_POLICY" OPENBLAS_VERBOSE=2
have_torch=1
"$PYTHON" -c "import torch" 2>/dev/null || have_torch=0
torch_bench() { "${torch_env[@]}" "$PYTHON" scripts/bench_torch.py --threads "$THREADS" "$@"; }
# PyTorch 2 from the forky folder, on copies of tapegpt's OpenBLAS files
# (BLAS, LAPACK and OpenBLAS itself; in /tmp, which the folder shares).
have_torch2=0
if [[ "$TORCH2" != 0 ]] && scripts/in_forky.sh python3 -c "import torch" 2>/dev/null; then
  have_torch2=1
  blas_copy="$(mktemp -d)"
  temporary+=("$blas_copy")
  for f in libblas.so.3 liblapack.so.3 libopenblas.so.0; do cp -L "$(dirname "$blas_lib")/$f" "$blas_copy/$f"; done
  torch2_env=("${torch_env[@]}")
  for i in "${!torch2_env[@]}"; do
    [[ "${torch2_env[$i]}" == LD_LIBRARY_PATH=* ]] && torch2_env[$i]="LD_LIBRARY_PATH=$blas_copy"
  done
  torch2_bench() { "${torch2_env[@]}" scripts/in_forky.sh python3 scripts/bench_torch.py --threads "$THREADS" "$@"; }
elif [[ "$TORCH2" == 1 ]]; then
  echo "bench.sh: TORCH2=1 but scripts/in_forky.sh python3 cannot import torch: run scripts/setup_forky.sh" >&2
  exit 1
fi

{
  echo "machine: $(bench_cpu_model), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB"
  echo "commit: $commit; $(date -u '+%F %H:%M UTC'); threads $THREADS; rounds $ROUNDS; steps $STEPS after $WARMUP warm-up"
  echo "tapegpt: $TAPEGPT, OpenBLAS $blas_lib (ldd), core $core; oneDNN ${dnnl_lib:-none} (ldd), ISA $dnnl_isa;" \
       "${tapegpt_wait[*]:-OMP_WAIT_POLICY unset}"
  if (( have_torch )); then
    libtorch="$("$PYTHON" -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))')"
    echo "PyTorch: $("${torch_env[@]}" "$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null);" \
         "libtorch_cpu.so loads $("${torch_env[@]}" ldd "$libtorch" | awk '$1 ~ /^libopenblas/ {print $3}')" \
         "and $("${torch_env[@]}" ldd "$libtorch" | awk '$1 ~ /^lib(dnnl|mkldnn)/ {print $3}') (ldd);" \
         "$("$PYTHON" -c 'import re, torch; print(re.search(r"MKL-DNN v[^ ]+|oneDNN v[^ ]+", torch.__config__.show()).group(0))' 2>/dev/null || echo "no oneDNN") (torch.__config__.show())"
    echo "PyTorch environment: ${torch_env[*]:1}"
    if (( have_torch2 )); then
      echo "PyTorch 2: $("${torch2_env[@]}" scripts/in_forky.sh python3 -c 'import torch; print(torch.__version__)' 2>/dev/null)" \
           "from the forky folder (scripts/in_forky.sh), OpenBLAS: copies of $(dirname "$blas_lib")'s libblas.so.3," \
           "liblapack.so.3, libopenblas.so.0 in $blas_copy ($(cmp -s "$blas_lib" "$blas_copy/libopenblas.so.0" && echo "the same bytes as tapegpt's" || echo "NOT the same bytes"));" \
           "its own oneDNN: $("${torch2_env[@]}" scripts/in_forky.sh python3 -c 'import re, torch; print(re.search(r"oneDNN v[^ ]+|MKL-DNN v[^ ]+", torch.__config__.show()).group(0))' 2>/dev/null || echo "none")"
    else
      echo "PyTorch 2: not run (TORCH2=$TORCH2, or no forky folder with python3-torch: scripts/setup_forky.sh)"
    fi
  else
    echo "PyTorch: not installed ($PYTHON cannot import torch): tapegpt alone"
  fi
  echo "CPU: $( (( cpu_amx )) && echo amx_bf16 || echo "no amx_bf16") in /proc/cpuinfo" \
       "($(grep -m1 -ow avx512_bf16 /proc/cpuinfo || echo "no avx512_bf16"));" \
       "oneDNN's bf16 ISA here: $dnnl_isa ($( (( native )) && echo native || echo "not native"))"
  [[ -n "$bf16_note" ]] && echo "$bf16_note"
  if (( bf16 && ! native )); then
    echo "BF16_ANYWAY=1: bf16 rows timed all the same, to check the script; each such figure is labelled \"bf16 emulated: not a result\""
  fi
  if (( bf16 && ! tapegpt_bf16 )); then
    echo "tapegpt bf16 row left out: $tapegpt_bf16_missing"
  fi
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$RAW/header.txt"

# The sides, in the order of round 1; each round starts one further on.
sides=(tapegpt)
(( have_torch )) && sides+=(torch)
(( have_torch && bf16 )) && sides+=(torch-bf16)
(( tapegpt_bf16 )) && sides+=(tapegpt-bf16)
(( have_torch2 )) && sides+=(torch2 torch2-sdpa)
(( have_torch2 && bf16 )) && sides+=(torch2-bf16 torch2-bf16-sdpa)
run_side() {
  local side="$1" shape="$2"
  local steps=(--steps "$STEPS" --warmup "$WARMUP")
  local tg_shape=(--shape "$shape") samples="$SAMPLE_TOKENS"
  # A rung: tapegpt's own ladder; PyTorch's sampler is nanoGPT's (learned positions), so neither samples.
  [[ "$shape" == rung* ]] && tg_shape=(--budget-rung "${shape#rung}") && samples=0
  local common=(--shape "$shape" "${steps[@]}")
  case "$side" in
    tapegpt) record "tapegpt-$shape" tapegpt bench "${tg_shape[@]}" "${steps[@]}" --json --sample-tokens "$samples" "${fp32[@]}" ;;
    torch) record "torch-$shape" torch_bench "${common[@]}" --sample-tokens "$samples" ;;
    torch-bf16) record "torch-bf16-$shape" torch_bench "${common[@]}" --sample-tokens 0 --autocast-bf16 ;;
    tapegpt-bf16) record "tapegpt-bf16-$shape" tapegpt bench "${tg_shape[@]}" "${steps[@]}" --json --sample-tokens 0 "${bf16_flag[@]}" ;;
    torch2) record "torch2-$shape" torch2_bench "${common[@]}" --sample-tokens 0 ;;
    torch2-sdpa) record "torch2-sdpa-$shape" torch2_bench "${common[@]}" --sample-tokens 0 --sdpa ;;
    torch2-bf16) record "torch2-bf16-$shape" torch2_bench "${common[@]}" --sample-tokens 0 --autocast-bf16 ;;
    torch2-bf16-sdpa) record "torch2-bf16-sdpa-$shape" torch2_bench "${common[@]}" --sample-tokens 0 --autocast-bf16 --sdpa ;;
  esac
}

for round in $(seq "$ROUNDS"); do
  echo "round $round of $ROUNDS ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))" >&2
  record sgemm-tapegpt tapegpt bench --sgemm-rate --json
  (( have_torch )) && record sgemm-torch torch_bench --sgemm-rate
  # Where bf16 is emulated: the ISA only, nothing timed (BF16_ANYWAY=1: timed, labelled).
  record bf16-rate-tapegpt tapegpt bench --bf16-rate --json "${bf16_rate_anyway[@]}"
  (( have_torch && bf16 )) && record bf16-rate-torch torch_bench --bf16-mm-rate
  for shape in $SHAPES; do
    for i in "${!sides[@]}"; do
      run_side "${sides[(i + round - 1) % ${#sides[@]}]}" "$shape"
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$RAW/header.txt"

summary_args=("$RAW" --shapes "$SHAPES" --commit "$commit" --blas-lib "$blas_lib" --torch-wait-policy "$TORCH_WAIT_POLICY"
              --tapegpt-wait-policy "$TAPEGPT_WAIT_POLICY" --dnnl-lib "${dnnl_lib:-}" --native "$native"
              --bf16-note "$bf16_note")
(( tapegpt_bf16 || ! bf16 )) || summary_args+=(--tapegpt-bf16-missing "$tapegpt_bf16_missing")
(( quick )) && summary_args+=(--quick)
[[ -n "$out_dir" ]] && summary_args+=(--json "$out_dir/summary.json" --md "$out_dir/summary.md")
echo
"$PYTHON" scripts/bench_summary.py "${summary_args[@]}"
