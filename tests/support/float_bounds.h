// Test support for float kernels against their double references (Note
// [Tolerances from float32 rounding] in tests/autograd/test_kernels_vs_reference.cpp):
// inputs that are exactly floats, and per-element bounds in units of float32's
// unit roundoff times a scale the test derives.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "support/gradcheck.h"

namespace testing {

constexpr double kU = 0x1p-24;  // float32 unit roundoff

// Random values that are exactly floats, so the reference computes from the
// very inputs the float kernel sees and the bounds measure the kernel alone.
template <class Scalar>
std::vector<Scalar> float_exact_vector(int64_t n, tg::Rng& rng, double scale = 1.0) {
  std::vector<Scalar> v = random_vector<Scalar>(n, rng, scale);
  for (auto& x : v) x = static_cast<Scalar>(static_cast<float>(x));
  return v;
}

// Each |got - want| ≤ k·u·scale. Below float's smallest normal number
// (1.2e-38) no relative accuracy is possible: scales are floored there.
inline void require_within(const std::vector<float>& got, const std::vector<double>& want,
                           const std::vector<double>& scale, double k, const char* what) {
  REQUIRE(got.size() == want.size());
  REQUIRE(scale.size() == want.size());
  double worst = 0.0;  // in units of u·scale
  size_t at = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double r = std::fabs(got[i] - want[i]) / (kU * std::max(scale[i], 0x1p-126 / kU));
    if (!(r <= worst)) {
      worst = r;
      at = i;
    }
  }
  INFO(what << ": worst error " << worst << " u·scale (bound " << k << ") at " << at << ": got "
            << got[at] << " want " << want[at] << " scale " << scale[at]);
  CHECK(worst <= k);
}

inline std::vector<double> abs_of(const std::vector<double>& v) {
  std::vector<double> a(v.size());
  for (size_t i = 0; i < v.size(); ++i) a[i] = std::fabs(v[i]);
  return a;
}

}  // namespace testing
