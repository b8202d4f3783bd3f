// sgemm peak measurement (see peak_flops.h).
#include "train/peak_flops.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace train {

double measure_sgemm_peak_flops() {
  const int n = 1024;
  std::vector<float> a(static_cast<size_t>(n) * n, 0.5f), b(a.size(), 0.25f), c(a.size());
  double best = 0.0;
  for (int rep = 0; rep < 4; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rep > 0) best = std::max(best, 2.0 * n * n * n / s);  // the first call warms up
  }
  return best;
}

}  // namespace train
