// The MLP activations beside GELU: ReLU² (Primer, modded-nanoGPT) and
// SwiGLU (Llama), each a pair of elementwise loops.
#include "autograd/kernels/fast_math.h"
#include "autograd/kernels/kernels.h"

namespace kernels {

void relu2_forward(float* out, const float* inp, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > 16384)
  for (int64_t i = 0; i < n; ++i) {
    const float r = inp[i] > 0.0f ? inp[i] : 0.0f;
    out[i] = r * r;
  }
}

void relu2_backward(float* dinp, const float* dout, const float* inp, int64_t n) {
  // d/dx max(x, 0)² = 2·max(x, 0) (0 at x = 0, from either side).
#pragma omp parallel for simd schedule(static) if (n > 16384)
  for (int64_t i = 0; i < n; ++i) {
    const float r = inp[i] > 0.0f ? inp[i] : 0.0f;
    dinp[i] += dout[i] * (2.0f * r);
  }
}

// σ(a) = 1/(1 + e), e = e^{-a}, with the vectorised fast_exp (as GELU), and
// 1 - σ(a) = e·σ(a): no cancellation for large a, where 1 - σ is tiny.

void swiglu_forward(float* out, const float* inp, int64_t N, int64_t H) {
#pragma omp parallel for schedule(static) if (N * H > 16384)
  for (int64_t n = 0; n < N; ++n) {
    const float* a = inp + n * 2 * H;
    const float* b = a + H;
    float* o = out + n * H;
#pragma omp simd
    for (int64_t c = 0; c < H; ++c) {
      const float s = 1.0f / (1.0f + fast_exp(-a[c]));
      o[c] = a[c] * s * b[c];
    }
  }
}

void swiglu_backward(float* dinp, const float* dout, const float* inp, int64_t N, int64_t H) {
  // d/da [a·σ(a)·b] = b·σ·(1 + a·(1 - σ)),  d/db = a·σ(a).
#pragma omp parallel for schedule(static) if (N * H > 16384)
  for (int64_t n = 0; n < N; ++n) {
    const float* a = inp + n * 2 * H;
    const float* b = a + H;
    const float* d = dout + n * H;
    float* da = dinp + n * 2 * H;
    float* db = da + H;
#pragma omp simd
    for (int64_t c = 0; c < H; ++c) {
      const float e = fast_exp(-a[c]);
      const float s = 1.0f / (1.0f + e);
      da[c] += d[c] * b[c] * s * (1.0f + a[c] * (e * s));
      db[c] += d[c] * (a[c] * s);
    }
  }
}

}  // namespace kernels
