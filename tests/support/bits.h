// Test support: bitwise float comparison, for results that must be the same
// bits (thread-count independence, save/load round trips), not just equal:
// -0.0 differs from 0.0, and a NaN matches only the same NaN.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace testing {

// A float's bits, and the float of some bits.
inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline bool same_bits(const float* a, const float* b, int64_t n) {
  return n == 0 || std::memcmp(a, b, static_cast<size_t>(n) * sizeof(float)) == 0;
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && same_bits(a.data(), b.data(), static_cast<int64_t>(a.size()));
}

}  // namespace testing
