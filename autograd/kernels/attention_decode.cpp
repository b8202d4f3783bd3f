// Attention for new tokens against a KV cache (inference; see kernels.h):
// one query, or a prompt's rows one query each.
#include <cmath>

#include "autograd/kernels/bf16.h"
#include "autograd/kernels/kernels.h"

namespace kernels {

void attention_decode(float* out, float* scratch, const float* q, const float* k_cache,
                      const float* v_cache, int64_t Tc, int64_t C, int64_t NH, bool bf16_products) {
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
    if (bf16_products) {
      // As the bf16 forward: the unnormalised weights rounded, the sum of
      // the unrounded ones dividing at the end.
      for (int64_t j = 0; j < Tc; ++j) {
        const float e = bf16_to_float(float_to_bf16(s[j]));
        const float* vj = v_cache + j * C + h * HS;
        for (int64_t i = 0; i < HS; ++i) oh[i] += e * vj[i];
      }
      const float inv = 1.0f / sum;
      for (int64_t i = 0; i < HS; ++i) oh[i] *= inv;
      continue;
    }
    for (int64_t j = 0; j < Tc; ++j) {
      const float p = s[j] / sum;
      const float* vj = v_cache + j * C + h * HS;
      for (int64_t i = 0; i < HS; ++i) oh[i] += p * vj[i];
    }
  }
}

void attention_decode_rows(float* out, float* scratch, const float* qkv, const float* k_cache,
                           const float* v_cache, int64_t pos0, int64_t T, int64_t C, int64_t NH,
                           bool bf16_products) {
  const int64_t Tc = pos0 + T;
  if (T == 1) {  // one token: attention_decode parallelises over its heads
    attention_decode(out, scratch, qkv, k_cache, v_cache, Tc, C, NH, bf16_products);
    return;
  }
  // Rows in parallel; the heads' loop inside then runs on one thread, with
  // the same arithmetic, so the bits do not depend on the split.
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t t = 0; t < T; ++t)
    attention_decode(out + t * C, scratch + t * NH * Tc, qkv + t * 3 * C, k_cache, v_cache, pos0 + t + 1, C, NH,
                     bf16_products);
}

}  // namespace kernels
