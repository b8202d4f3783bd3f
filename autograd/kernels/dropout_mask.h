// The dropout mask as a pure function of (seed, index) (internal header):
// shared by the dropout kernels and the attention kernels' dropout on the
// attention probabilities, so no mask is ever stored, backward rebuilds it,
// and the result depends on neither blocking nor thread count.
#pragma once

#include <cstdint>

namespace kernels {

// p·2^53: element i is dropped when its 53-bit hash falls below this.
inline uint64_t dropout_threshold(float p) {
  return static_cast<uint64_t>(static_cast<double>(p) * 9007199254740992.0);
}

// splitmix64's finaliser over seed and index: a well-mixed 64-bit hash;
// kept when its top 53 bits are at least p·2^53 (probability 1 - p).
inline bool dropout_keep(uint64_t seed, int64_t i, uint64_t threshold) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (static_cast<uint64_t>(i) + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (z >> 11) >= threshold;
}

}  // namespace kernels
