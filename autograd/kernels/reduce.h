// Deterministic column reductions shared by the kernels (internal header).
#pragma once

#include <cstdint>

namespace kernels {

// dst[c] += Σ_n src[n, c] over N rows of width C. Threads own disjoint column
// blocks and each sums its rows in order, so the result is the same for any
// thread count.
void sum_rows_accumulate(float* dst, const float* src, int64_t N, int64_t C);

}  // namespace kernels
