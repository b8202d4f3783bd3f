// Logit soft-capping kernels: out = cap·tanh(x/cap) and its backward.
//
// Note [Softcap precision]
// tanh(u) without libm's tanhf (a call per element: the loop would not
// vectorise), each branch free of cancellation, both computed and one
// selected so the loop stays branch-free:
//   |u| ≤ 0.625: Cephes' tanhf polynomial u + u³·P(u²), relative error about
//     2.5e-7 (4 ulps), exact in sign and size near 0 where the logits of a
//     fresh model live;
//   |u| > 0.625: tanh|u| = 1 - s with s = 2e/(1 + e), e = e^{-2|u|} ∈ (0, 0.29)
//     by fast_exp (no overflow); 1 - s ≥ 0.55, so its rounding is relative.
// The derivative 1 - tanh²(u) likewise (tanh_derivative). Every element is
// computed alone, so the bits do not depend on the thread count.
#include <cmath>

#include "autograd/kernels/fast_math.h"
#include "autograd/kernels/kernels.h"

namespace kernels {

namespace {

constexpr float kPolyLimit = 0.625f;

// Cephes' tanhf for |u| ≤ 0.625.
inline float tanh_poly(float u) {
  const float z = u * u;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  return p * z * u + u;
}

// 1 - tanh|u| = 2e/(1 + e), e = e^{-2|u|}: good for |u| > 0.625.
inline float one_minus_tanh_abs(float a) {
  const float e = fast_exp(-2.0f * a);
  return 2.0f * e / (1.0f + e);
}

// 1 - tanh²(u): 1 - t² where t² ≤ 0.31, s·(2 - s) = (1 - t)(1 + t) in the
// tail, where 1 - t² is tiny and would cancel.
inline float tanh_derivative(float u) {
  const float a = std::fabs(u);
  const float t = tanh_poly(u);
  const float s = one_minus_tanh_abs(a);
  return a <= kPolyLimit ? 1.0f - t * t : s * (2.0f - s);
}

}  // namespace

void softcap_forward(float* out, const float* inp, int64_t n, float cap) {
  const float inv_cap = 1.0f / cap;
#pragma omp parallel for simd schedule(static) if (n > 16384)
  for (int64_t i = 0; i < n; ++i) {
    const float u = inp[i] * inv_cap;
    const float a = std::fabs(u);
    const float tail = std::copysign(1.0f - one_minus_tanh_abs(a), u);
    out[i] = cap * (a <= kPolyLimit ? tanh_poly(u) : tail);
  }
}

void softcap_backward(float* dinp, const float* dout, const float* inp, int64_t n, float cap) {
  const float inv_cap = 1.0f / cap;
  // Over the input: 0 + g, the bits a zeroed dinp would get. Two loops, so
  // neither holds a branch.
  if (dinp == inp) {
#pragma omp parallel for simd schedule(static) if (n > 16384)
    for (int64_t i = 0; i < n; ++i) dinp[i] = 0.0f + dout[i] * tanh_derivative(inp[i] * inv_cap);
  } else {
#pragma omp parallel for simd schedule(static) if (n > 16384)
    for (int64_t i = 0; i < n; ++i) dinp[i] += dout[i] * tanh_derivative(inp[i] * inv_cap);
  }
}

}  // namespace kernels
