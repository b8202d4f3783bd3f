// Vectorisable float approximations used inside kernels (internal header).
// None has a call or a data-dependent branch, so loops over them vectorise;
// each is accurate to a few float32 ulps (tests/autograd checks them against
// double-precision libm).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace kernels {

// e^x as Cephes' expf: x = n·ln2 + r with |r| ≤ ln2/2, a degree-6 polynomial
// for e^r, 2^n built in the exponent bits. About 1 ulp for x in
// [-87.3, 88]; arguments are clamped to that range (e^-87.3 ≈ 1.2e-38, the
// smallest normal float; e^88 ≈ 1.7e38, where n = 127 is the largest 2^n the
// exponent bits hold), so there is no overflow to inf and no subnormal. n is rounded by adding and subtracting
// 1.5·2²³ because std::floor blocks GCC's vectoriser without
// -fno-trapping-math.
inline float fast_exp(float x) {
  x = x < -87.3f ? -87.3f : (x > 88.0f ? 88.0f : x);
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = x - n * 0.693359375f;  // ln2 in two parts: n times this one is exact
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;  // 2^n, n ∈ [-126, 127]
  float pow2n;
  std::memcpy(&pow2n, &bits, sizeof pow2n);
  return p * pow2n;
}

// erfc(y) as Numerical Recipes' erfcc (a Chebyshev fit of erfc(z)·e^{z²} in
// t = 1/(1 + z/2), fractional error below 1.2e-7 everywhere in exact
// arithmetic), evaluated in float: relative error a few ulps plus about
// z²·2⁻²⁴ from rounding the exponent's argument, so GELU's tail (where
// erfc is tiny) keeps its relative accuracy instead of cancelling in 1 + erf.
inline float fast_erfc(float y) {
  const float z = std::fabs(y);
  const float t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t + -0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t + -1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t + -0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  const float r = t * fast_exp(p * t - 1.26551223f - z * z);
  return y >= 0.0f ? r : 2.0f - r;
}

}  // namespace kernels
