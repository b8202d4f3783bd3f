// sgemm rate measurements (see peak_flops.h).
#include "train/peak_flops.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>

namespace train {

namespace {

// Seconds for one n³ product C = A·B (row-major, no transposes).
double time_sgemm(int n, const float* a, const float* b, float* c) {
  const auto t0 = std::chrono::steady_clock::now();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

double measure_sgemm_peak_flops() {
  const int n = 1024;
  std::vector<float> a(static_cast<size_t>(n) * n, 0.5f), b(a.size(), 0.25f), c(a.size());
  double best = 0.0;
  for (int rep = 0; rep < 4; ++rep) {
    const double s = time_sgemm(n, a.data(), b.data(), c.data());
    if (rep > 0) best = std::max(best, 2.0 * n * n * n / s);  // the first call warms up
  }
  return best;
}

std::vector<SgemmRate> measure_sgemm_rates(const std::vector<int>& sizes, int reps) {
  std::vector<SgemmRate> rates;
  for (const int n : sizes) {
    std::vector<float> a(static_cast<size_t>(n) * n, 0.5f), b(a.size(), 0.25f), c(a.size());
    time_sgemm(n, a.data(), b.data(), c.data());  // warm-up: page faults, OpenBLAS's buffers
    std::vector<double> rate;
    for (int rep = 0; rep < reps; ++rep)
      rate.push_back(2.0 * n * n * n / time_sgemm(n, a.data(), b.data(), c.data()));
    std::sort(rate.begin(), rate.end());
    rates.push_back({n, rate[rate.size() / 2]});
  }
  return rates;
}

}  // namespace train
