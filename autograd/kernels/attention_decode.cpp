// Attention for one new token against a KV cache (the decode step of
// inference; see kernels.h).
#include <cmath>

#include "autograd/kernels/kernels.h"

namespace kernels {

void attention_decode(float* out, float* scratch, const float* q, const float* k_cache,
                      const float* v_cache, int64_t Tc, int64_t C, int64_t NH) {
  const int64_t HS = C / NH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(HS));
#pragma omp parallel for schedule(static) if (NH * Tc * HS > 65536)
  for (int64_t h = 0; h < NH; ++h) {
    const float* qh = q + h * HS;
    float* s = scratch + h * Tc;
    float mx = -INFINITY;
    for (int64_t j = 0; j < Tc; ++j) {
      const float* kj = k_cache + j * C + h * HS;
      float dot = 0.0f;
      for (int64_t i = 0; i < HS; ++i) dot += qh[i] * kj[i];
      s[j] = dot * scale;
      mx = s[j] > mx ? s[j] : mx;
    }
    float sum = 0.0f;
    for (int64_t j = 0; j < Tc; ++j) {
      s[j] = std::exp(s[j] - mx);
      sum += s[j];
    }
    float* oh = out + h * HS;
    for (int64_t i = 0; i < HS; ++i) oh[i] = 0.0f;
    for (int64_t j = 0; j < Tc; ++j) {
      const float p = s[j] / sum;
      const float* vj = v_cache + j * C + h * HS;
      for (int64_t i = 0; i < HS; ++i) oh[i] += p * vj[i];
    }
  }
}

}  // namespace kernels
