// RMSNorm kernels over the last dimension (eps = kRMSNormEps).
#include <algorithm>
#include <cmath>

#include "autograd/kernels/kernels.h"
#include "autograd/kernels/reduce.h"

namespace kernels {

void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int64_t N,
                     int64_t C) {
#pragma omp parallel for schedule(static) if (N * C > 16384)
  for (int64_t n = 0; n < N; ++n) {
    const float* x = inp + n * C;
    float* o = out + n * C;
    // Σ x² in double, as LayerNorm's sums: each x² of a float is exact in
    // double, so rstd is the exact value rounded once to float; in 8 lanes
    // (Note [Lane reductions] in reduce.h).
    const double ss = lane_sum<8, double>(C, [x](int64_t c) {
      const double v = static_cast<double>(x[c]);
      return v * v;
    });
    const float s = static_cast<float>(
        1.0 / std::sqrt(ss / static_cast<double>(C) + static_cast<double>(kRMSNormEps)));
    for (int64_t c = 0; c < C; ++c) o[c] = x[c] * s * weight[c];
    rstd[n] = s;
  }
}

void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* weight, const float* rstd, int64_t N, int64_t C) {
  if (dinp) {
#pragma omp parallel for schedule(static) if (N * C > 16384)
    for (int64_t n = 0; n < N; ++n) {
      const float* x = inp + n * C;
      const float* d = dout + n * C;
      float* dx = dinp + n * C;
      const float s = rstd[n];
      // mean_c(g·x̂) = rstd·Σ_c dout·w·x / C, the sum in double (lanes, as the
      // forward): only the final rounding to float is left.
      const double gx_sum = lane_sum<8, double>(C, [d, weight, x](int64_t c) {
        return static_cast<double>(d[c]) * static_cast<double>(weight[c]) * static_cast<double>(x[c]);
      });
      const float gx_mean = static_cast<float>(gx_sum * static_cast<double>(s) / static_cast<double>(C));
      for (int64_t c = 0; c < C; ++c) {
        const float xhat = x[c] * s;
        dx[c] += s * (d[c] * weight[c] - xhat * gx_mean);
      }
    }
  }
  // dweight[c] += Σ_n dout[n,c]·x̂[n,c], the product in double: the only
  // float-sized error is rstd's own rounding.
  if (dweight)
    column_sums_accumulate(dweight, N, C, [=](int64_t n, int64_t c) {
      return static_cast<double>(dout[n * C + c]) * static_cast<double>(inp[n * C + c]) *
             static_cast<double>(rstd[n]);
    });
}

}  // namespace kernels
