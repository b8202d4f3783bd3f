// Vectorisable float approximations used inside kernels (internal header).
#pragma once

#include <cmath>

namespace kernels {

// tanh(x) as a 13/6 rational polynomial on [-7.905, 7.905] (Eigen's
// generic_fast_tanh_float coefficients), exact-enough for float32: the
// largest error against double tanh is 4e-7 (tests/autograd checks it).
// Unlike std::tanh it has no branches or calls, so loops over it vectorise;
// GELU spent two thirds of its time in libm's tanhf before.
inline float fast_tanh(float x) {
  constexpr float kClamp = 7.90531110763549805f;
  const float xc = x > kClamp ? kClamp : (x < -kClamp ? -kClamp : x);
  const float x2 = xc * xc;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 + -8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  p = p * xc;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  // Tiny inputs: tanh(x) = x to float precision (the ratio loses bits there).
  return std::fabs(x) < 0.0004f ? x : p / q;
}

}  // namespace kernels
