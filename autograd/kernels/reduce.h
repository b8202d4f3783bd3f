// Deterministic column reductions shared by the kernels (internal header).
#pragma once

#include <cstdint>

namespace kernels {

// dst[c] += Σ_n src[n, c] over N rows of width C. Threads own disjoint column
// blocks and each sums its rows in order, so the result is the same for any
// thread count.
void sum_rows_accumulate(float* dst, const float* src, int64_t N, int64_t C);

// dst[c] += Σ_n term(n, c) over N rows of width C, term a double, summed as
// sum_rows_accumulate: threads own column blocks of 64, rows in order, so the
// result is the same for any thread count. (A norm's weight gradient.)
template <class Term>
inline void column_sums_accumulate(float* dst, int64_t N, int64_t C, Term term) {
  constexpr int64_t kBlock = 64;
  const int64_t n_blocks = (C + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (N * C > 16384)
  for (int64_t blk = 0; blk < n_blocks; ++blk) {
    const int64_t c0 = blk * kBlock, c1 = C < c0 + kBlock ? C : c0 + kBlock;
    double acc[kBlock] = {};
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = c0; c < c1; ++c) acc[c - c0] += term(n, c);
    for (int64_t c = c0; c < c1; ++c) dst[c] = static_cast<float>(dst[c] + acc[c - c0]);
  }
}

// Note [Lane reductions]
// Σ_{i<n} term(i) in Lanes interleaved partial sums (lane l takes i ≡ l mod
// Lanes, in order), added in lane order at the end; lane_max likewise. One
// running sum is a chain of dependent additions (4 cycles each, and it does
// not vectorise without -ffast-math); the lanes vectorise, and their order
// depends on n alone, so every thread count gives the same bits.
template <int64_t Lanes, class Acc, class Term>
inline Acc lane_sum(int64_t n, Term term) {
  Acc lane[Lanes] = {};
  int64_t i = 0;
  for (; i + Lanes <= n; i += Lanes)
    for (int64_t l = 0; l < Lanes; ++l) lane[l] += term(i + l);
  for (int64_t l = 0; i < n; ++i, ++l) lane[l] += term(i);
  Acc sum = 0;
  for (int64_t l = 0; l < Lanes; ++l) sum += lane[l];
  return sum;
}

// max(init, x[0…n-1]) in 16 lanes (Note [Lane reductions]).
inline float lane_max(const float* x, int64_t n, float init) {
  constexpr int64_t kLanes = 16;
  float lane[kLanes];
  for (int64_t l = 0; l < kLanes; ++l) lane[l] = init;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lane[l] = x[i + l] > lane[l] ? x[i + l] : lane[l];
  for (int64_t l = 0; i < n; ++i, ++l) lane[l] = x[i] > lane[l] ? x[i] : lane[l];
  float mx = init;
  for (int64_t l = 0; l < kLanes; ++l) mx = lane[l] > mx ? lane[l] : mx;
  return mx;
}

}  // namespace kernels
