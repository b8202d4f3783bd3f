// Attention's block products with bf16 operands and float32 sums (internal
// header; Note [bf16 attention products] in attention_flash.cpp says which
// products use them): operands packed as bf16 pairs, and block_mac_bf16, the
// register-blocked product over them (AVX512_BF16's dot-pair instruction
// where the build targets it, a plain loop elsewhere).
#pragma once

#include <cstdint>

namespace kernels {

// Note [bf16 pairs]
// A bf16 pair is one 32-bit word holding two bf16 values that are summed
// over together: the even index in the low half, the odd one in the high
// half (so a row of bf16 values in memory, read as words, is a row of
// pairs). A product of pairs is a.lo·b.lo + a.hi·b.hi, exact in float32
// for each term (8 + 8 significant bits), added into a float32 sum. Every
// value is rounded from float32 to nearest, ties to even, as float_to_bf16
// rounds it (bf16.h); a missing partner (an odd count) is 0.

// dst[p·ldd + j] = pair(src[2p, j], src[2p+1, j]) for p < ⌈rows/2⌉, j < cols,
// with src[r, j] = src[r·lds + j]: rows two by two, column by column (a
// right operand summed over its rows, or a left one summed over its rows
// once transposed). The odd row's partner is 0.
void pack_row_pairs(uint32_t* dst, int64_t ldd, const float* src, int64_t lds, int64_t rows, int64_t cols);

// dst[i·ldd + x] = bf16(src[i·lds + x]) for x < cols, and dst[i·ldd + cols]
// = 0 when cols is odd, for i < rows: each row as ⌈cols/2⌉ pairs of
// consecutive values (a left operand summed over its columns). ldd even.
void round_rows_bf16(uint16_t* dst, int64_t ldd, const float* src, int64_t lds, int64_t rows, int64_t cols);

// c[i, 0…n) += Σ_{p<kp} a(i, p)·b[p, 0…n) for i < m, products of pairs,
// where a(i, p) = a[i·sai + p·sap] and b[p, j] = b[p·ldb + j]. Each c
// element is loaded once, takes its kp pair products in increasing p, and
// is stored once; the bits depend on m, n, kp and the values only. c must
// not overlap a or b.
void block_mac_bf16(float* __restrict c, int64_t ldc, const uint32_t* __restrict a, int64_t sai, int64_t sap,
                    const uint32_t* __restrict b, int64_t ldb, int64_t m, int64_t n, int64_t kp);

}  // namespace kernels
