// RMSNorm kernels over the last dimension (eps = kRMSNormEps), and QK-norm:
// the same norm, gain 1, over each attention head's q and k.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "autograd/kernels/kernels.h"
#include "autograd/kernels/reduce.h"

namespace kernels {

namespace {

// 1/√(mean(x²) + eps) of one row of C values. Σ x² in double, as
// LayerNorm's sums: each x² of a float is exact in double, so rstd is the
// exact value rounded once to float; in 8 lanes (Note [Lane reductions] in
// reduce.h).
float row_rstd(const float* x, int64_t C) {
  const double ss = lane_sum<8, double>(C, [x](int64_t c) {
    const double v = static_cast<double>(x[c]);
    return v * v;
  });
  return static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(C) + static_cast<double>(kRMSNormEps)));
}

// dx += s·(g - x̂·mean_c(g·x̂)) for one row, g = d·weight (kGain), or d.
// mean_c(g·x̂) = s·Σ_c g·x / C, the sum in double (lanes, as the forward):
// only the final rounding to float is left.
template <bool kGain>
void row_backward(float* dx, const float* d, const float* x, const float* weight, float s, int64_t C) {
  double gx_sum;
  if constexpr (kGain)
    gx_sum = lane_sum<8, double>(C, [d, weight, x](int64_t c) {
      return static_cast<double>(d[c]) * static_cast<double>(weight[c]) * static_cast<double>(x[c]);
    });
  else
    gx_sum = lane_sum<8, double>(C, [d, x](int64_t c) { return static_cast<double>(d[c]) * static_cast<double>(x[c]); });
  const float gx_mean = static_cast<float>(gx_sum * static_cast<double>(s) / static_cast<double>(C));
  for (int64_t c = 0; c < C; ++c) {
    const float xhat = x[c] * s;
    if constexpr (kGain) dx[c] += s * (d[c] * weight[c] - xhat * gx_mean);
    else dx[c] += s * (d[c] - xhat * gx_mean);
  }
}

}  // namespace

void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int64_t N,
                     int64_t C) {
#pragma omp parallel for schedule(static) if (N * C > 16384)
  for (int64_t n = 0; n < N; ++n) {
    const float* x = inp + n * C;
    float* o = out + n * C;
    const float s = row_rstd(x, C);
    for (int64_t c = 0; c < C; ++c) o[c] = x[c] * s * weight[c];
    rstd[n] = s;
  }
}

void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* weight, const float* rstd, int64_t N, int64_t C) {
  if (dinp) {
#pragma omp parallel for schedule(static) if (N * C > 16384)
    for (int64_t n = 0; n < N; ++n)
      row_backward<true>(dinp + n * C, dout + n * C, inp + n * C, weight, rstd[n], C);
  }
  // dweight[c] += Σ_n dout[n,c]·x̂[n,c], the product in double: the only
  // float-sized error is rstd's own rounding.
  if (dweight)
    column_sums_accumulate(dweight, N, C, [=](int64_t n, int64_t c) {
      return static_cast<double>(dout[n * C + c]) * static_cast<double>(inp[n * C + c]) *
             static_cast<double>(rstd[n]);
    });
}

// Each token's row of qkv is [q heads | k heads | v]: its first 2·NH
// head-rows of HS values are normalised, the last NH copied.
void qk_rmsnorm_forward(float* out, float* rstd, const float* qkv, int64_t N, int64_t C, int64_t NH) {
  const int64_t HS = C / NH;
#pragma omp parallel for schedule(static) if (N * C > 16384)
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t h = 0; h < 2 * NH; ++h) {
      const float* x = qkv + n * 3 * C + h * HS;
      float* o = out + n * 3 * C + h * HS;
      const float s = row_rstd(x, HS);
      for (int64_t c = 0; c < HS; ++c) o[c] = x[c] * s;
      rstd[n * 2 * NH + h] = s;
    }
    std::memcpy(out + n * 3 * C + 2 * C, qkv + n * 3 * C + 2 * C, static_cast<size_t>(C) * sizeof(float));
  }
}

void qk_rmsnorm_backward(float* dqkv, const float* dout, const float* qkv, const float* rstd, int64_t N,
                         int64_t C, int64_t NH) {
  const int64_t HS = C / NH;
#pragma omp parallel for schedule(static) if (N * C > 16384)
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t h = 0; h < 2 * NH; ++h) {
      const int64_t at = n * 3 * C + h * HS;
      row_backward<false>(dqkv + at, dout + at, qkv + at, nullptr, rstd[n * 2 * NH + h], HS);
    }
    for (int64_t c = 2 * C; c < 3 * C; ++c) dqkv[n * 3 * C + c] += dout[n * 3 * C + c];
  }
}

}  // namespace kernels
