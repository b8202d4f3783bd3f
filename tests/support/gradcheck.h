// Test support: random data and central-difference gradient checks.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "autograd/base/rng.h"

namespace testing {

template <class Scalar>
std::vector<Scalar> random_vector(int64_t n, tg::Rng& rng, double scale = 1.0) {
  std::vector<Scalar> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<Scalar>(rng.normal() * scale);
  return v;
}

inline std::vector<float> to_float(const std::vector<double>& v) {
  return std::vector<float>(v.begin(), v.end());
}

// The worst error seen by every check in this process, printed by the tests
// that want it for the record.
struct GradcheckStats {
  double worst = 0.0;
  int64_t checks = 0;
};

// Compares analytic[i] with the central difference (loss(x+h) - loss(x-h))/2h
// at up to `samples` indices of x (all when x is small), restoring x.
// The error measure is |fd - analytic| / max(floor, |fd|, |analytic|): relative
// for large gradients, absolute (scaled by floor) near zero.
// Returns the worst error; `what` names the tensor in failure messages.
template <class Scalar>
double gradcheck(std::vector<Scalar>& x, const std::vector<Scalar>& analytic,
                 const std::function<double()>& loss, double h, double floor, int samples,
                 tg::Rng& rng, GradcheckStats* stats = nullptr) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<int64_t> idx;
  if (n <= samples) {
    for (int64_t i = 0; i < n; ++i) idx.push_back(i);
  } else {
    for (int s = 0; s < samples; ++s) idx.push_back(static_cast<int64_t>(rng.below(n)));
  }
  double worst = 0.0;
  for (int64_t i : idx) {
    const Scalar saved = x[i];
    x[i] = static_cast<Scalar>(saved + h);
    const double up = loss();
    x[i] = static_cast<Scalar>(saved - h);
    const double down = loss();
    x[i] = saved;
    const double fd = (up - down) / (2.0 * h);
    const double an = analytic[i];
    const double err = std::fabs(fd - an) / std::max({floor, std::fabs(fd), std::fabs(an)});
    worst = std::max(worst, err);
  }
  if (stats) {
    stats->worst = std::max(stats->worst, worst);
    stats->checks += static_cast<int64_t>(idx.size());
  }
  return worst;
}

template <class Scalar>
double dot(const std::vector<Scalar>& a, const std::vector<Scalar>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

inline double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

}  // namespace testing
