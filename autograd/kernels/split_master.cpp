// Split float32 masters (Note [Split master weights] in split_master.h).
#include "autograd/kernels/split_master.h"

#include <algorithm>
#include <vector>

namespace kernels {

void join_master(float* out, const uint16_t* hi, const uint16_t* lo, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > 32768)
  for (int64_t i = 0; i < n; ++i) out[i] = join_master(hi[i], lo[i]);
}

namespace {

// Pairs handled through the scratch buffer at once: 256 KiB.
constexpr int64_t kScratchPairs = 65536;

// a holds n pairs (x0 y0 x1 y1 …); afterwards x0 … x(n-1) y0 … y(n-1).
// Halves first, then one rotation swaps the first half's ys with the second
// half's xs: O(n log n) moves, and no memory but the scratch.
void unshuffle(uint16_t* a, int64_t n, uint16_t* scratch) {
  if (n <= kScratchPairs) {
    std::copy(a, a + 2 * n, scratch);
    for (int64_t i = 0; i < n; ++i) {
      a[i] = scratch[2 * i];
      a[n + i] = scratch[2 * i + 1];
    }
    return;
  }
  const int64_t k = n / 2;
  unshuffle(a, k, scratch);
  unshuffle(a + 2 * k, n - k, scratch);
  std::rotate(a + k, a + 2 * k, a + n + k);  // [x₁ y₁ x₂ y₂] → [x₁ x₂ y₁ y₂]
}

// The inverse of unshuffle.
void shuffle(uint16_t* a, int64_t n, uint16_t* scratch) {
  if (n <= kScratchPairs) {
    std::copy(a, a + 2 * n, scratch);
    for (int64_t i = 0; i < n; ++i) {
      a[2 * i] = scratch[i];
      a[2 * i + 1] = scratch[n + i];
    }
    return;
  }
  const int64_t k = n / 2;
  std::rotate(a + k, a + n, a + n + k);  // [x₁ x₂ y₁ y₂] → [x₁ y₁ x₂ y₂]
  shuffle(a, k, scratch);
  shuffle(a + 2 * k, n - k, scratch);
}

}  // namespace

void split_master_in_place(float* buf, int64_t n) {
  // Each float becomes its (hi, lo) pair in its own 4 bytes; memcpy, as the
  // bytes change type.
#pragma omp parallel for schedule(static) if (n > 32768)
  for (int64_t i = 0; i < n; ++i) {
    uint16_t pair[2];
    split_master(buf[i], &pair[0], &pair[1]);
    std::memcpy(buf + i, pair, sizeof pair);
  }
  std::vector<uint16_t> scratch(2 * kScratchPairs);
  unshuffle(reinterpret_cast<uint16_t*>(buf), n, scratch.data());
}

void join_master_in_place(float* buf, int64_t n) {
  std::vector<uint16_t> scratch(2 * kScratchPairs);
  shuffle(reinterpret_cast<uint16_t*>(buf), n, scratch.data());
#pragma omp parallel for schedule(static) if (n > 32768)
  for (int64_t i = 0; i < n; ++i) {
    uint16_t pair[2];
    std::memcpy(pair, buf + i, sizeof pair);
    const float x = join_master(pair[0], pair[1]);
    std::memcpy(buf + i, &x, sizeof x);
  }
}

}  // namespace kernels
