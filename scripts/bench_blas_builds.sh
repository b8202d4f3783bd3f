#!/usr/bin/env bash
# The same build/tapegpt against each of Debian's three OpenBLAS builds
# (selected with LD_LIBRARY_PATH, as a user would end up with them),
# alternating them within each round; prints median step times and ratios
# to the first build (BENCHMARKS-journal.md, "OpenBLAS builds").
#   ROUNDS=5 bash scripts/bench_blas_builds.sh      # also: bash scripts/bench.sh --blas-builds
#   SHAPES="S M" BUILDS="openmp pthread" THREADS=2 TAPEGPT=build/tapegpt bash scripts/bench_blas_builds.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench_lib.sh
SHAPES="${SHAPES:-S M G}"
ROUNDS="${ROUNDS:-2}"
THREADS="${THREADS:-$(nproc)}"
LIBDIR="${LIBDIR:-/usr/lib/$(gcc -print-multiarch)}"
BUILDS="${BUILDS:-openmp pthread serial}"
bench_use_tapegpt
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
for b in $BUILDS; do
  [[ -e "$LIBDIR/openblas-$b/libopenblas.so.0" ]] || { echo "bench_blas_builds.sh: no $LIBDIR/openblas-$b; run scripts/setup.sh" >&2; exit 1; }
done
echo "machine: $(bench_cpu_model), $(nproc) cores; threads $THREADS; $(date -u '+%F %H:%M UTC')"
echo "commit: $(bench_commit); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$ROUNDS"); do
  for shape in $SHAPES; do
    steps=8 warmup=2
    [[ $shape == G ]] && steps="${G_STEPS:-3}" warmup=1  # G steps take seconds each
    for b in $BUILDS; do
      # Only LD_LIBRARY_PATH differs; the user's OpenBLAS/OpenMP settings are cleared.
      env -u OPENBLAS_NUM_THREADS -u OMP_WAIT_POLICY LD_LIBRARY_PATH="$LIBDIR/openblas-$b" \
        "$TAPEGPT" bench --shape "$shape" --threads "$THREADS" --json --no-profile --sample-tokens 0 \
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
