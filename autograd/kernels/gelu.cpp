// GELU kernels, tanh approximation (as GPT-2 and nanoGPT's new_gelu).
#include <cmath>

#include "autograd/kernels/fast_math.h"
#include "autograd/kernels/kernels.h"

namespace kernels {

namespace {
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;
}  // namespace

void gelu_forward(float* out, const float* inp, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > 16384)
  for (int64_t i = 0; i < n; ++i) {
    const float x = inp[i];
    const float u = kSqrt2OverPi * (x + kCubic * x * x * x);
    out[i] = 0.5f * x * (1.0f + fast_tanh(u));
  }
}

void gelu_backward(float* dinp, const float* dout, const float* inp, int64_t n) {
  // d/dx [0.5·x·(1 + tanh u)] = 0.5·(1 + tanh u) + 0.5·x·sech²u · u',
  // u' = √(2/π)·(1 + 3·0.044715·x²).
#pragma omp parallel for simd schedule(static) if (n > 16384)
  for (int64_t i = 0; i < n; ++i) {
    const float x = inp[i];
    const float u = kSqrt2OverPi * (x + kCubic * x * x * x);
    const float th = fast_tanh(u);
    const float sech2 = 1.0f - th * th;
    const float du = kSqrt2OverPi * (1.0f + 3.0f * kCubic * x * x);
    dinp[i] += dout[i] * (0.5f * (1.0f + th) + 0.5f * x * sech2 * du);
  }
}

}  // namespace kernels
