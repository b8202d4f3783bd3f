#!/usr/bin/env bash
# What issue 9's precision work costs in speed, measured fairly on a busy
# machine: the GELU and LayerNorm kernels of a base commit (default ce8ff7c,
# before issue 9) and of the working tree, compiled with the project's flags
# into one program, timed interleaved on one thread, minimum of many runs.
# Prints the extra milliseconds per training step of shape S (4 layers: 4
# GELU and 9 LayerNorm forward+backward calls at N = 1024) next to the step.
#   scripts/bench_precision_cost.sh [BASE_COMMIT]
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-ce8ff7c}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/old"
# The base commit's kernels, renamed into namespace oldk so both link together.
for f in gelu.cpp fast_math.h layernorm.cpp elementwise.cpp reduce.h kernels.h; do
  git show "$base:autograd/kernels/$f" | sed 's/namespace kernels/namespace oldk/; s/kernels::/oldk::/g' \
    | sed 's|#include "autograd/kernels/\(.*\)"|#include "\1"|' > "$tmp/old/$f"
done
cat > "$tmp/main.cpp" <<'CPP'
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
#include "autograd/kernels/kernels.h"
namespace oldk {
void gelu_forward(float*, const float*, int64_t);
void gelu_backward(float*, const float*, const float*, int64_t);
void layernorm_forward(float*, float*, float*, const float*, const float*, const float*, int64_t, int64_t);
void layernorm_backward(float*, float*, float*, const float*, const float*, const float*, const float*,
                        const float*, int64_t, int64_t);
}
template <class F> double best_of(F fn, int reps) {
  double best = 1e9;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}
int main() {
  const int64_t N = 8 * 128, C = 256, n = N * 4 * C;  // shape S
  std::vector<float> x(n), y(n), dx(n), dy(n, 1.0f), lx(N * C), lo(N * C), mean(N), rstd(N), w(C, 1.1f),
      b(C, 0.1f), ldx(N * C), dw(C), db(C), ld(N * C);
  std::mt19937 g(1);
  std::normal_distribution<float> nd(0, 1.5f);
  for (auto& v : x) v = nd(g);
  for (auto& v : lx) v = nd(g);
  for (auto& v : ld) v = nd(g);
  double t[5] = {1e9, 1e9, 1e9, 1e9, 1e9};
  for (int round = 0; round < 20; ++round) {  // interleaved: the same load for each
    t[0] = std::min(t[0], best_of([&] { oldk::gelu_forward(y.data(), x.data(), n); oldk::gelu_backward(dx.data(), dy.data(), x.data(), n); }, 10));
    t[1] = std::min(t[1], best_of([&] { kernels::gelu_forward(y.data(), x.data(), n); kernels::gelu_backward(dx.data(), dy.data(), x.data(), n); }, 10));
    t[2] = std::min(t[2], best_of([&] { kernels::gelu_forward(y.data(), x.data(), n, kernels::GeluKind::Erf); kernels::gelu_backward(dx.data(), dy.data(), x.data(), n, kernels::GeluKind::Erf); }, 10));
    t[3] = std::min(t[3], best_of([&] { oldk::layernorm_forward(lo.data(), mean.data(), rstd.data(), lx.data(), w.data(), b.data(), N, C);
      oldk::layernorm_backward(ldx.data(), dw.data(), db.data(), ld.data(), lx.data(), w.data(), mean.data(), rstd.data(), N, C); }, 10));
    t[4] = std::min(t[4], best_of([&] { kernels::layernorm_forward(lo.data(), mean.data(), rstd.data(), lx.data(), w.data(), b.data(), N, C);
      kernels::layernorm_backward(ldx.data(), dw.data(), db.data(), ld.data(), lx.data(), w.data(), mean.data(), rstd.data(), N, C); }, 10));
  }
  std::printf("one thread, minimum of 200 calls each, shape S sizes:\n");
  std::printf("  GELU fwd+bwd (%lld elements): base %.3f ms, tanh now %.3f ms (%.2fx), erf now %.3f ms (%.2fx)\n",
              (long long)n, t[0] * 1e3, t[1] * 1e3, t[1] / t[0], t[2] * 1e3, t[2] / t[0]);
  std::printf("  LayerNorm fwd+bwd (N %lld, C %lld): base %.3f ms, now %.3f ms (%.2fx)\n", (long long)N,
              (long long)C, t[3] * 1e3, t[4] * 1e3, t[4] / t[3]);
  std::printf("  extra per shape-S step (4 GELU + 9 LayerNorm calls, one thread): %.2f ms (tanh), %.2f ms (erf)\n",
              (4 * (t[1] - t[0]) + 9 * (t[4] - t[3])) * 1e3, (4 * (t[2] - t[0]) + 9 * (t[4] - t[3])) * 1e3);
  // Accuracy on x in [-6, 6] every 1/4096 against the formulas in double
  // (tanh form as x·σ(2u), erf form as ½·x·erfc(-x/√2): no cancellation).
  std::vector<float> gx, ones;
  for (double v = -6; v <= 6; v += 1.0 / 4096) { gx.push_back(static_cast<float>(v)); ones.push_back(1.0f); }
  const int64_t m = static_cast<int64_t>(gx.size());
  std::vector<float> fy(m), fd(m);
  auto report = [&](const char* what, bool erf) {
    double rel3 = 0, dabs = 0;
    const double k = std::sqrt(2.0 / M_PI), u = std::ldexp(1.0, -24);
    for (int64_t i = 0; i < m; ++i) {
      const double x = gx[i];
      double y, d;
      if (erf) {
        y = 0.5 * x * std::erfc(-x / std::sqrt(2.0));
        d = 0.5 * std::erfc(-x / std::sqrt(2.0)) + x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
      } else {
        const double s = 1.0 / (1.0 + std::exp(-2.0 * k * (x + 0.044715 * x * x * x)));
        y = x * s;
        d = s + 2.0 * x * k * (1.0 + 3.0 * 0.044715 * x * x) * s * (1.0 - s);
      }
      if (std::fabs(x) <= 3 && y != 0) rel3 = std::max(rel3, std::fabs(fy[i] - y) / std::fabs(y) / u);
      dabs = std::max(dabs, std::fabs(fd[i] - d));
    }
    std::printf("  %s: forward max relative error on |x| <= 3 %.1f ulp; derivative max absolute error %.2e\n", what, rel3, dabs);
  };
  std::printf("GELU accuracy, x in [-6, 6] every 1/4096, against double:\n");
  oldk::gelu_forward(fy.data(), gx.data(), m);
  std::fill(fd.begin(), fd.end(), 0.0f);
  oldk::gelu_backward(fd.data(), ones.data(), gx.data(), m);
  report("base (rational tanh)", false);
  kernels::gelu_forward(fy.data(), gx.data(), m);
  std::fill(fd.begin(), fd.end(), 0.0f);
  kernels::gelu_backward(fd.data(), ones.data(), gx.data(), m);
  report("now, tanh", false);
  kernels::gelu_forward(fy.data(), gx.data(), m, kernels::GeluKind::Erf);
  std::fill(fd.begin(), fd.end(), 0.0f);
  kernels::gelu_backward(fd.data(), ones.data(), gx.data(), m, kernels::GeluKind::Erf);
  report("now, erf", true);
}
CPP
flags="-O3 -march=native -fopenmp -std=c++17"
for f in gelu layernorm elementwise; do
  c++ $flags -I "$tmp/old" -c "$tmp/old/$f.cpp" -o "$tmp/old_$f.o"
  c++ $flags -I . -c "autograd/kernels/$f.cpp" -o "$tmp/new_$f.o"
done
c++ $flags -I . "$tmp/main.cpp" "$tmp"/old_*.o "$tmp"/new_*.o -o "$tmp/bench"
OMP_NUM_THREADS=1 "$tmp/bench"
# PyTorch's own float32 GELUs on the same grid, for comparison (if installed).
/usr/bin/python3 - <<'PY' 2>/dev/null || echo "(PyTorch comparison skipped: no torch in /usr/bin/python3)"
import math
import torch
x = (torch.arange(-6 * 4096, 6 * 4096 + 1, dtype=torch.float64) / 4096).float()
xd = x.double()
k = math.sqrt(2 / math.pi)
refs = {"tanh": xd / (1 + torch.exp(-2 * k * (xd + 0.044715 * xd ** 3))),
        "none": 0.5 * xd * torch.special.erfc(-xd / math.sqrt(2))}
for approx, ref in refs.items():
    got = torch.nn.functional.gelu(x, approximate=approx).double()
    m = (xd.abs() <= 3) & (ref != 0)
    rel = ((got - ref).abs()[m] / ref.abs()[m]).max().item() / 2.0 ** -24
    print(f"  PyTorch {torch.__version__} float32 gelu(approximate='{approx}'): forward max relative error on |x| <= 3 {rel:.1f} ulp")
PY
