// Inverted dropout with a counter-based mask: element i is kept when a hash
// of (seed, i) is at least p, so backward rebuilds the mask from the seed.
#include "autograd/kernels/kernels.h"

namespace kernels {

namespace {

// splitmix64's finaliser over seed and index: a well-mixed 64-bit hash.
inline bool keep_element(uint64_t seed, int64_t i, uint64_t threshold) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (static_cast<uint64_t>(i) + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (z >> 11) >= threshold;  // 53 random bits against p·2^53
}

inline uint64_t drop_threshold(float p) {
  return static_cast<uint64_t>(static_cast<double>(p) * 9007199254740992.0);  // p·2^53
}

}  // namespace

void dropout_forward(float* out, const float* inp, float p, uint64_t seed, int64_t n) {
  const uint64_t threshold = drop_threshold(p);
  const float scale = 1.0f / (1.0f - p);
#pragma omp parallel for schedule(static) if (n > 16384)
  for (int64_t i = 0; i < n; ++i) out[i] = keep_element(seed, i, threshold) ? inp[i] * scale : 0.0f;
}

void dropout_backward(float* dinp, const float* dout, float p, uint64_t seed, int64_t n) {
  const uint64_t threshold = drop_threshold(p);
  const float scale = 1.0f / (1.0f - p);
#pragma omp parallel for schedule(static) if (n > 16384)
  for (int64_t i = 0; i < n; ++i)
    if (keep_element(seed, i, threshold)) dinp[i] += dout[i] * scale;
}

}  // namespace kernels
