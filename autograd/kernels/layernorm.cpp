// LayerNorm kernels over the last dimension (eps = kLayerNormEps).
#include <algorithm>
#include <cmath>

#include "autograd/kernels/kernels.h"
#include "autograd/kernels/reduce.h"

namespace kernels {

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp,
                       const float* weight, const float* bias, int64_t N, int64_t C) {
#pragma omp parallel for schedule(static) if (N * C > 16384)
  for (int64_t n = 0; n < N; ++n) {
    const float* x = inp + n * C;
    float* o = out + n * C;
    // Two passes (mean, then centred variance): stabler than E[x²] - E[x]².
    // Sums in double: a float running sum over C terms is off by up to C·u,
    // and an exact mean and rstd cost nothing next to the matmuls; in 8
    // lanes (Note [Lane reductions] in reduce.h).
    const double sum = lane_sum<8, double>(C, [x](int64_t c) { return static_cast<double>(x[c]); });
    const float m = static_cast<float>(sum / static_cast<double>(C));
    const double var = lane_sum<8, double>(C, [x, m](int64_t c) {
                         const double d = static_cast<double>(x[c]) - m;
                         return d * d;
                       }) /
                       static_cast<double>(C);
    const float s = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(kLayerNormEps)));
    for (int64_t c = 0; c < C; ++c) {
      const float y = (x[c] - m) * s * weight[c];
      o[c] = bias ? y + bias[c] : y;
    }
    mean[n] = m;
    rstd[n] = s;
  }
}

void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                        const float* inp, const float* weight, const float* mean,
                        const float* rstd, int64_t N, int64_t C) {
  if (dinp) {
#pragma omp parallel for schedule(static) if (N * C > 16384)
    for (int64_t n = 0; n < N; ++n) {
      const float* x = inp + n * C;
      const float* d = dout + n * C;
      float* dx = dinp + n * C;
      const float m = mean[n], s = rstd[n];
      // mean_c(g), mean_c(g·x̂) with g = dout·w, summed in double as the forward
      const double g_sum = lane_sum<8, double>(C, [d, weight](int64_t c) { return static_cast<double>(d[c] * weight[c]); });
      const double gx_sum = lane_sum<8, double>(C, [d, weight, x, m, s](int64_t c) {
        return static_cast<double>(d[c] * weight[c] * ((x[c] - m) * s));
      });
      const float g_mean = static_cast<float>(g_sum / static_cast<double>(C));
      const float gx_mean = static_cast<float>(gx_sum / static_cast<double>(C));
      for (int64_t c = 0; c < C; ++c) {
        const float xhat = (x[c] - m) * s;
        dx[c] += s * (d[c] * weight[c] - g_mean - xhat * gx_mean);
      }
    }
  }
  if (dbias) sum_rows_accumulate(dbias, dout, N, C);
  // dweight[c] += Σ_n dout[n,c]·x̂[n,c], x̂ in float as the forward's.
  if (dweight)
    column_sums_accumulate(dweight, N, C, [=](int64_t n, int64_t c) {
      return static_cast<double>(dout[n * C + c] * ((inp[n * C + c] - mean[n]) * rstd[n]));
    });
}

}  // namespace kernels
