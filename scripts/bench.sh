#!/usr/bin/env bash
# Side-by-side CPU benchmark: tapegpt against a clean nanoGPT-style PyTorch
# step (scripts/bench_torch.py) on the S, M and G shapes, alternating the two
# so a noisy machine affects both alike, then medians and ratios. llm.c has
# no Debian package: its figures are quoted from the issue's measurements.
#   scripts/bench.sh                 # all shapes, 2 rounds, all cores
#   SHAPES="S M" ROUNDS=3 THREADS=2 scripts/bench.sh
# With --blas-builds it instead times the same binary against each of
# Debian's three OpenBLAS builds (LD_LIBRARY_PATH), alternating them within
# each round, and prints median step times and ratios to the OpenMP build:
#   ROUNDS=5 scripts/bench.sh --blas-builds
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
SHAPES="${SHAPES:-S M G}"
ROUNDS="${ROUNDS:-2}"
THREADS="${THREADS:-$(nproc)}"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; threads $THREADS; $(date -u +%F)"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

if [[ "${1:-}" == --blas-builds ]]; then
  LIBDIR="${LIBDIR:-/usr/lib/$(gcc -print-multiarch)}"
  BUILDS="${BUILDS:-openmp pthread serial}"
  for b in $BUILDS; do
    [[ -e "$LIBDIR/openblas-$b/libopenblas.so.0" ]] || { echo "bench.sh: no $LIBDIR/openblas-$b; run scripts/setup.sh" >&2; exit 1; }
  done
  for round in $(seq "$ROUNDS"); do
    for shape in $SHAPES; do
      steps=8 warmup=2
      [[ $shape == G ]] && steps="${G_STEPS:-3}" warmup=1  # G steps take seconds each
      for b in $BUILDS; do
        # Only LD_LIBRARY_PATH differs; the user's OpenBLAS/OpenMP settings are cleared.
        env -u OPENBLAS_NUM_THREADS -u OMP_WAIT_POLICY LD_LIBRARY_PATH="$LIBDIR/openblas-$b" \
          build/tapegpt bench --shape "$shape" --threads "$THREADS" --json --no-profile --sample-tokens 0 \
          --steps "$steps" --warmup "$warmup" >> "$OUT/$b-$shape"
      done
    done
  done
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/python3 - "$OUT" "$BUILDS" $SHAPES <<'PY'
import json, os, statistics, sys
out, builds, shapes = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
print(f"\n{'shape':5} {'build':8} {'reported':26} {'median step s':>13} {'all rounds':30} {'vs first':>9}")
for s in shapes:
    base = None
    for b in builds:
        rows = [json.loads(l) for l in open(os.path.join(out, f"{b}-{s}"))]
        med = statistics.median(r["step_s"] for r in rows)
        base = base or med
        rep = f"{rows[0]['blas_build']}{' (split)' if rows[0]['blas_split'] else ''} {rows[0]['blas_core']}"
        rounds = " ".join("%.3f" % r["step_s"] for r in rows)
        print(f"{s:5} {b:8} {rep:26} {med:13.4f} {rounds:30} {med / base:9.2f}")
PY
  exit 0
fi
have_torch=1
/usr/bin/python3 -c "import torch" 2>/dev/null || have_torch=0
for shape in $SHAPES; do
  for round in $(seq "$ROUNDS"); do
    build/tapegpt bench --shape "$shape" --threads "$THREADS" --json --no-profile --steps 10 >> "$OUT/tapegpt-$shape"
    if [[ $have_torch == 1 ]]; then
      # PASSIVE is PyTorch's best setting here (its OpenMP threads stop spinning).
      OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 scripts/bench_torch.py --shape "$shape" --threads "$THREADS" >> "$OUT/torch-$shape"
    fi
  done
  echo
  build/tapegpt bench --shape "$shape" --threads "$THREADS" --steps 5 --sample-tokens 0
done

/usr/bin/python3 - "$OUT" $SHAPES <<'PY'
import json, os, statistics, sys
out, shapes = sys.argv[1], sys.argv[2:]
llmc = {"S": 1000, "M": 280, "G": 33}         # tok/s, from the issue's table
llmc_sample_g = 2.8
def load(name):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return []
    return [json.loads(l) for l in open(path) if l.strip()]
print("\nsummary (medians over rounds; ratios measured side by side in this run)")
print(f"{'shape':5} {'tapegpt tok/s':>14} {'torch tok/s':>12} {'ratio':>6} {'vs llm.c':>9} {'GFLOP/s':>8} {'% sgemm':>8} {'opt %':>6} {'RSS MiB':>8} {'torch RSS':>9} {'sample tok/s':>13} {'torch':>7}")
for s in shapes:
    t, p = load(f"tapegpt-{s}"), load(f"torch-{s}")
    med = lambda rows, k: statistics.median(r[k] for r in rows) if rows else float("nan")
    ours, theirs = med(t, "tokens_per_s"), med(p, "tokens_per_s")
    print(f"{s:5} {ours:14.0f} {theirs:12.0f} {ours / theirs:6.2f} {ours / llmc[s]:8.1f}x "
          f"{med(t, 'model_gflops'):8.1f} {100 * med(t, 'model_gflops') / med(t, 'sgemm_peak_gflops'):7.0f}% "
          f"{100 * med(t, 'optimizer_s') / med(t, 'step_s'):5.1f}% {med(t, 'peak_rss_mib'):8.0f} {med(p, 'peak_rss_mib'):9.0f} "
          f"{med(t, 'sample_tokens_per_s'):13.1f} {med(p, 'sample_tokens_per_s'):7.1f}")
print(f"llm.c figures quoted from the issue: {llmc} tok/s; G sampling {llmc_sample_g} tok/s")
PY
