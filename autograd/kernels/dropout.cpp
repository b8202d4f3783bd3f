// Inverted dropout with a counter-based mask: element i is kept when a hash
// of (seed, i) is at least p, so backward rebuilds the mask from the seed.
#include "autograd/kernels/dropout_mask.h"
#include "autograd/kernels/kernels.h"

namespace kernels {

void dropout_forward(float* out, const float* inp, float p, uint64_t seed, int64_t n) {
  const uint64_t threshold = dropout_threshold(p);
  const float scale = 1.0f / (1.0f - p);
#pragma omp parallel for schedule(static) if (n > 16384)
  for (int64_t i = 0; i < n; ++i) out[i] = dropout_keep(seed, i, threshold) ? inp[i] * scale : 0.0f;
}

void dropout_backward(float* dinp, const float* dout, float p, uint64_t seed, int64_t n) {
  const uint64_t threshold = dropout_threshold(p);
  const float scale = 1.0f / (1.0f - p);
#pragma omp parallel for schedule(static) if (n > 16384)
  for (int64_t i = 0; i < n; ++i)
    if (dropout_keep(seed, i, threshold)) dinp[i] += dout[i] * scale;
}

}  // namespace kernels
