// The bf16 block kernels (block_kernels_bf16.h): with AVX512_BF16, packing
// rounds 16 floats at a time on their bits and the product holds a tile of
// c in registers, one VDPBF16PS per pair and vector, as block_mac does with
// fmas (Note [Attention micro-kernel] in block_kernels.cpp); elsewhere plain
// loops with the same meaning.
#include "autograd/kernels/block_kernels_bf16.h"

#include <array>
#include <utility>

#include "autograd/kernels/bf16.h"
#include "autograd/kernels/block_kernels.h"

#if defined(__AVX512BF16__) && defined(__AVX512F__)
#include <immintrin.h>
#define TAPEGPT_BF16_BLOCKS_VECTOR 1
#endif

namespace kernels {

#if TAPEGPT_BF16_BLOCKS_VECTOR

// GCC 12's AVX-512 intrinsics pass `__m512i __Y = __Y;` as an unused merge
// source, which -Wmaybe-uninitialized reports wherever they are inlined (as
// in block_kernels.cpp).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace {

// float_bits_to_bf16 (bf16.h) on 16 floats' bits: the bf16 in each word's
// low half, the high half 0.
inline __m512i round16(__m512i u) {
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
  const __m512i quiet_nan = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                 _mm512_set1_epi32(0x7f800000));
  return _mm512_mask_blend_epi32(nan, rounded, quiet_nan);
}

inline __mmask16 first_lanes(int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); }  // n ≤ 16

}  // namespace

void pack_row_pairs(uint32_t* dst, int64_t ldd, const float* src, int64_t lds, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; r += 2) {
    const float* even = src + r * lds;
    const float* odd = r + 1 < rows ? even + lds : nullptr;
    uint32_t* out = dst + (r / 2) * ldd;
    for (int64_t j = 0; j < cols; j += 16) {
      const __mmask16 m = first_lanes(cols - j < 16 ? cols - j : 16);
      const __m512i lo = round16(_mm512_maskz_loadu_epi32(m, even + j));
      const __m512i hi = odd ? round16(_mm512_maskz_loadu_epi32(m, odd + j)) : _mm512_setzero_si512();
      _mm512_mask_storeu_epi32(out + j, m, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
    }
  }
}

void round_rows_bf16(uint16_t* dst, int64_t ldd, const float* src, int64_t lds, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    const float* in = src + i * lds;
    uint16_t* out = dst + i * ldd;
    for (int64_t x = 0; x < cols; x += 16) {
      const __mmask16 m = first_lanes(cols - x < 16 ? cols - x : 16);
      _mm512_mask_cvtepi32_storeu_epi16(out + x, m, round16(_mm512_maskz_loadu_epi32(m, in + x)));
    }
    if (cols % 2) out[cols] = 0;
  }
}

namespace {

constexpr int kRows = 4, kVecs = 4;
constexpr int64_t kWidth = 16, kTileCols = kWidth * kVecs;

// The tile of R rows × NV vectors at c, whose last vector holds `last`
// columns (1…16); lanes past it read zeros of b and are never stored.
template <int R, int NV>
void tile(float* __restrict c, int64_t ldc, const uint32_t* __restrict a, int64_t sai, int64_t sap,
          const uint32_t* __restrict b, int64_t ldb, int64_t kp, int64_t last) {
  const __mmask16 tail = first_lanes(last);
  __m512 acc[R][NV];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v + 1 < NV; ++v) acc[r][v] = _mm512_loadu_ps(c + r * ldc + v * kWidth);
    acc[r][NV - 1] = _mm512_maskz_loadu_ps(tail, c + r * ldc + (NV - 1) * kWidth);
  }
  for (int64_t p = 0; p < kp; ++p) {
    const uint32_t* bp = b + p * ldb;
    __m512i bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v + 1 < NV; ++v) bv[v] = _mm512_loadu_si512(bp + v * kWidth);
    bv[NV - 1] = _mm512_maskz_loadu_epi32(tail, bp + (NV - 1) * kWidth);
    // Pinned in registers, as in block_mac (otherwise GCC reloads b per row).
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) asm("" : "+v"(bv[v]));
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512i ar = _mm512_set1_epi32(static_cast<int>(a[r * sai + p * sap]));
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[r][v] = _mm512_dpbf16_ps(acc[r][v], reinterpret_cast<__m512bh>(ar), reinterpret_cast<__m512bh>(bv[v]));
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v + 1 < NV; ++v) _mm512_storeu_ps(c + r * ldc + v * kWidth, acc[r][v]);
    _mm512_mask_storeu_ps(c + r * ldc + (NV - 1) * kWidth, tail, acc[r][NV - 1]);
  }
}

using TileFn = void (*)(float*, int64_t, const uint32_t*, int64_t, int64_t, const uint32_t*, int64_t, int64_t,
                        int64_t);

template <int R, size_t... V>
constexpr std::array<TileFn, kVecs> tiles_with_rows(std::index_sequence<V...>) {
  return {tile<R, static_cast<int>(V) + 1>...};
}
constexpr auto kVecSeq = std::make_index_sequence<kVecs>();
static_assert(kRows == 4, "kTiles lists one row of tiles per row count");
constexpr std::array<std::array<TileFn, kVecs>, kRows> kTiles = {
    tiles_with_rows<1>(kVecSeq), tiles_with_rows<2>(kVecSeq), tiles_with_rows<3>(kVecSeq),
    tiles_with_rows<4>(kVecSeq)};

}  // namespace

void block_mac_bf16(float* __restrict c, int64_t ldc, const uint32_t* __restrict a, int64_t sai, int64_t sap,
                    const uint32_t* __restrict b, int64_t ldb, int64_t m, int64_t n, int64_t kp) {
  // Column strips outside, so a strip of b (kp × 64 pairs) stays in L1 for
  // every row tile.
  for (int64_t j0 = 0; j0 < n; j0 += kTileCols) {
    const int64_t nc = n - j0 < kTileCols ? n - j0 : kTileCols;
    const int64_t nv = (nc + kWidth - 1) / kWidth;
    const int64_t last = nc - (nv - 1) * kWidth;
    for (int64_t i0 = 0; i0 < m; i0 += kRows) {
      const int64_t mr = m - i0 < kRows ? m - i0 : kRows;
      kTiles[mr - 1][nv - 1](c + i0 * ldc + j0, ldc, a + i0 * sai, sai, sap, b + j0, ldb, kp, last);
    }
  }
}

#pragma GCC diagnostic pop

#else  // no AVX512_BF16 in this build: the same meaning, one value at a time

namespace {

inline uint32_t pair_of(uint16_t lo, uint16_t hi) { return static_cast<uint32_t>(lo) | static_cast<uint32_t>(hi) << 16; }

}  // namespace

void pack_row_pairs(uint32_t* dst, int64_t ldd, const float* src, int64_t lds, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; r += 2)
    for (int64_t j = 0; j < cols; ++j)
      dst[(r / 2) * ldd + j] =
          pair_of(float_to_bf16(src[r * lds + j]), r + 1 < rows ? float_to_bf16(src[(r + 1) * lds + j]) : 0);
}

void round_rows_bf16(uint16_t* dst, int64_t ldd, const float* src, int64_t lds, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t x = 0; x < cols; ++x) dst[i * ldd + x] = float_to_bf16(src[i * lds + x]);
    if (cols % 2) dst[i * ldd + cols] = 0;
  }
}

void block_mac_bf16(float* __restrict c, int64_t ldc, const uint32_t* __restrict a, int64_t sai, int64_t sap,
                    const uint32_t* __restrict b, int64_t ldb, int64_t m, int64_t n, int64_t kp) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = c[i * ldc + j];
      for (int64_t p = 0; p < kp; ++p) {
        const uint32_t x = a[i * sai + p * sap], y = b[p * ldb + j];
        acc = fused_mac(bf16_to_float(static_cast<uint16_t>(x >> 16)), bf16_to_float(static_cast<uint16_t>(y >> 16)), acc);
        acc = fused_mac(bf16_to_float(static_cast<uint16_t>(x)), bf16_to_float(static_cast<uint16_t>(y)), acc);
      }
      c[i * ldc + j] = acc;
    }
}

#endif

}  // namespace kernels
