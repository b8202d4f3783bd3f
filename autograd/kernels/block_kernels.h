// The block kernels under blockwise attention (internal header): a
// register-blocked product c += a·b over blocks of at most 64×64, whose every
// element gets the same chain of fused multiply-adds as the plain triple loop
// (Note [Attention micro-kernel] in block_kernels.cpp), and the transpose
// that puts k's rows in the form the product wants.
#pragma once

#include <cstdint>

namespace kernels {

// c + a·b rounded once where the target has a fast fma (what GCC's default
// -ffp-contract=fast makes of `c += a * b` there), c + a·b rounded twice
// where it has none (nothing to contract into).
inline float fused_mac(float a, float b, float c) {
#if defined(__FP_FAST_FMAF)
  return __builtin_fmaf(a, b, c);
#else
  return c + a * b;
#endif
}

// c[i, 0…n) += Σ_{x<k} a(i, x)·b[x, 0…n) for i < m, where a(i, x) is
// a[i·sai + x·sax] (a row-major operand has sax = 1, a transposed one
// sai = 1). Each c[i, j] is loaded once, becomes
// fused_mac(a(i, x), b[x, j], c[i, j]) for x = 0, 1, …, k-1 in that order,
// and is stored once, for any m, n, k ≥ 0. c must not overlap a or b.
void block_mac(float* __restrict c, int64_t ldc, const float* __restrict a, int64_t sai,
               int64_t sax, const float* __restrict b, int64_t ldb, int64_t m, int64_t n,
               int64_t k);

// dst[c·ldd + j] = src[j·lds + c] for j < rows, c < cols (exact copies).
void block_transpose(float* __restrict dst, int64_t ldd, const float* __restrict src, int64_t lds,
                     int64_t rows, int64_t cols);

}  // namespace kernels
