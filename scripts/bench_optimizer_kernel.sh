#!/usr/bin/env bash
# Is the optimizer's kernel slower? kernels::adamw_update alone, float32 (no
# bf16 copies), on GPT-2 small's 124,439,808 parameters: this checkout's
# kernels library against a base commit's, each linked into the same small
# timing program, run alternately ROUNDS times; each run prints the median
# of 9 calls. A step's optimizer time (bench's optimizer_s) mixes in the
# gradient norm and the machine's noise; this isolates the pass itself.
#   bash scripts/bench_optimizer_kernel.sh 01aaeab
#   ROUNDS=5 THREADS=2 bash scripts/bench_optimizer_kernel.sh BASE
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench_lib.sh
HELP_END=9 bench_parse_base "${1:-}"
base="$1"
ROUNDS="${ROUNDS:-3}"
THREADS="${THREADS:-$(nproc)}"
echo "building the kernels of $base and of this checkout ..." >&2
bench_base_worktree "$base"
cat > "$work/time_adamw.cpp" <<'CPP'
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "autograd/kernels/kernels.h"

int main() {
  const int64_t n = 124439808;  // GPT-2 small
  std::vector<float> p(n, 0.01f), m(n, 0.0f), v(n, 0.0f), g(n, 0.001f);
  std::vector<double> t;
  for (int r = 0; r < 9; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    kernels::adamw_update(p.data(), m.data(), v.data(), g.data(), n, 1e-4f, 0.9f, 0.95f, 1e-8f, 0.1f, r + 1, 1.0f);
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  std::printf("%.1f\n", 1e3 * t[4]);
}
CPP
build_timer() {  # build_timer SRC_DIR NAME: the kernels library of SRC_DIR, and the timer linked to it
  cmake -S "$1" -B "$work/build-$2" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$work/build-$2" --target tapegpt_kernels -j"$(nproc)" >/dev/null
  g++ -O3 -march=native -fopenmp -I"$1" "$work/time_adamw.cpp" \
    "$work/build-$2/autograd/kernels/libtapegpt_kernels.a" -o "$work/$2" -lopenblas -ldnnl
}
build_timer "$work/src" base
build_timer "$PWD" this
echo "machine: $(bench_cpu_model), $(nproc) cores; threads $THREADS; $(date -u '+%F %H:%M UTC')"
echo "this: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- autograd || echo ' (uncommitted changes)'); base: $(git rev-parse --short "$base")"
for round in $(seq "$ROUNDS"); do
  b="$(OMP_NUM_THREADS=$THREADS "$work/base")"; t="$(OMP_NUM_THREADS=$THREADS "$work/this")"
  echo "round $round: adamw_update median ms, base $b, this $t"
done
