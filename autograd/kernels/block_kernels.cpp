// block_mac and block_transpose (block_kernels.h) for attention's 64×64
// blocks: the product holds a tile of c in vector registers across the whole
// sum; the transpose moves 16×16 squares through registers.
#include "autograd/kernels/block_kernels.h"

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>

#include <array>
#include <utility>
#define TAPEGPT_BLOCK_MAC_VECTOR 1
#endif

namespace kernels {

// Note [Attention micro-kernel]
// The plain loop (for i, for x, for j: c[i,j] += a(i,x)·b[x,j]) loads and
// stores a row of c for every x, so loads and stores, not multiplies, set its
// speed. Here a tile of kRows rows × up to kVecs vectors of c stays in
// registers for the whole x loop: per x, the tile's part of row b[x] is
// loaded once and used by every row, and a(i,x) is broadcast once and used
// by every vector. Each c element still starts from its stored value, takes
// one fma(a(i,x), b[x,j], c) per x in increasing x and is stored at the end,
// the chain the plain loop compiled to with GCC's default -ffp-contract=fast
// on an FMA target, so results are bit-identical to it (the fma is written
// out, not left to contraction; tests/autograd/test_block_kernels.cpp compares
// every element with memcmp). Only the order across different elements
// changed, which no result depends on. The last, partial vector of a row
// (n not a multiple of the width) is read and written under a lane mask;
// the masked-off lanes add zeros that are never stored. Without AVX-512 or
// AVX2 + FMA the plain loop remains, its multiply-add written as fused_mac.
// block_transpose only moves floats, so q·kᵀ keeps its sums too.

#if TAPEGPT_BLOCK_MAC_VECTOR
namespace {

#if defined(__AVX512F__)
// 32 registers: a 4×64 tile is 16 accumulators, 4 rows of b and a broadcast.
struct Lanes {
  using Vec = __m512;
  using Mask = __mmask16;
  static constexpr int kWidth = 16, kVecs = 4;
  static Mask first(int64_t n) { return static_cast<Mask>((1u << n) - 1u); }  // n ≤ 16
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static Vec load(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static void store(float* p, Vec v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
  static Vec broadcast(float x) { return _mm512_set1_ps(x); }
  static Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
};
#else
// 16 registers: a 4×16 tile is 8 accumulators, 2 rows of b and a broadcast.
struct Lanes {
  using Vec = __m256;
  using Mask = __m256i;
  static constexpr int kWidth = 8, kVecs = 2;
  static Mask first(int64_t n) {  // n ≤ 8
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static Vec load(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static void store(float* p, Vec v, Mask m) { _mm256_maskstore_ps(p, m, v); }
  static Vec broadcast(float x) { return _mm256_set1_ps(x); }
  static Vec fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
};
#endif

constexpr int kRows = 4;
constexpr int64_t kWidth = Lanes::kWidth, kTileCols = Lanes::kWidth * Lanes::kVecs;

// The tile of R rows × NV vectors at c, whose last vector holds `last`
// columns (1…kWidth).
template <int R, int NV>
void tile(float* __restrict c, int64_t ldc, const float* __restrict a, int64_t sai, int64_t sax,
          const float* __restrict b, int64_t ldb, int64_t k, int64_t last) {
  using Vec = Lanes::Vec;
  const Lanes::Mask tail = Lanes::first(last);
  Vec acc[R][NV];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v + 1 < NV; ++v) acc[r][v] = Lanes::load(c + r * ldc + v * kWidth);
    acc[r][NV - 1] = Lanes::load(c + r * ldc + (NV - 1) * kWidth, tail);
  }
  for (int64_t x = 0; x < k; ++x) {
    const float* bx = b + x * ldb;
    Vec bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v + 1 < NV; ++v) bv[v] = Lanes::load(bx + v * kWidth);
    bv[NV - 1] = Lanes::load(bx + (NV - 1) * kWidth, tail);
    // Pins each b vector in a register (the empty asm may change it, so it
    // must be there): otherwise GCC folds the load into every row's fma and
    // reads b kRows times per x, which measured about 1.2× slower in
    // attention's backward and forward together.
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) asm("" : "+v"(bv[v]));
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const Vec ar = Lanes::broadcast(a[r * sai + x * sax]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = Lanes::fma(ar, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v + 1 < NV; ++v) Lanes::store(c + r * ldc + v * kWidth, acc[r][v]);
    Lanes::store(c + r * ldc + (NV - 1) * kWidth, acc[r][NV - 1], tail);
  }
}

using TileFn = void (*)(float*, int64_t, const float*, int64_t, int64_t, const float*, int64_t,
                        int64_t, int64_t);

// kTiles[R-1][NV-1] = tile<R, NV>.
static_assert(kRows == 4, "kTiles below lists one row of tiles per row count");
template <int R, size_t... V>
constexpr std::array<TileFn, Lanes::kVecs> tiles_with_rows(std::index_sequence<V...>) {
  return {tile<R, static_cast<int>(V) + 1>...};
}
constexpr auto kVecSeq = std::make_index_sequence<Lanes::kVecs>();
constexpr std::array<std::array<TileFn, Lanes::kVecs>, kRows> kTiles = {
    tiles_with_rows<1>(kVecSeq), tiles_with_rows<2>(kVecSeq), tiles_with_rows<3>(kVecSeq),
    tiles_with_rows<4>(kVecSeq)};

}  // namespace

void block_mac(float* __restrict c, int64_t ldc, const float* __restrict a, int64_t sai,
               int64_t sax, const float* __restrict b, int64_t ldb, int64_t m, int64_t n,
               int64_t k) {
  // Column strips outside, so a strip of b (k × kTileCols) is reused from L1
  // by every row tile.
  for (int64_t j0 = 0; j0 < n; j0 += kTileCols) {
    const int64_t nc = n - j0 < kTileCols ? n - j0 : kTileCols;
    const int64_t nv = (nc + kWidth - 1) / kWidth;
    const int64_t last = nc - (nv - 1) * kWidth;
    for (int64_t i0 = 0; i0 < m; i0 += kRows) {
      const int64_t mr = m - i0 < kRows ? m - i0 : kRows;
      kTiles[mr - 1][nv - 1](c + i0 * ldc + j0, ldc, a + i0 * sai, sai, sax, b + j0, ldb, k, last);
    }
  }
}

#else  // no vector path: the same chain, one element at a time

void block_mac(float* __restrict c, int64_t ldc, const float* __restrict a, int64_t sai,
               int64_t sax, const float* __restrict b, int64_t ldb, int64_t m, int64_t n,
               int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    float* ci = c + i * ldc;
    for (int64_t x = 0; x < k; ++x) {
      const float ax = a[i * sai + x * sax];
      const float* bx = b + x * ldb;
      for (int64_t j = 0; j < n; ++j) ci[j] = fused_mac(ax, bx[j], ci[j]);
    }
  }
}

#endif

#if defined(__AVX512F__)

// GCC 12's shuffle intrinsics pass `__m512 __Y = __Y;` (_mm512_undefined_ps)
// as their unused merge source, which -Wmaybe-uninitialized reports wherever
// they are inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace {

// The rows r[0…15] of a 16×16 square become its columns, in four rounds of
// lane shuffles: pairs of floats, pairs of pairs, then 128-bit lanes twice.
inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // u[4g + q], 128-bit lane L: column 4L + q of rows 4g … 4g+3.
#pragma GCC unroll 4
  for (int g = 0; g < 4; ++g) {
    const __m512d a = _mm512_castps_pd(t[4 * g]), b = _mm512_castps_pd(t[4 * g + 2]);
    const __m512d c = _mm512_castps_pd(t[4 * g + 1]), d = _mm512_castps_pd(t[4 * g + 3]);
    u[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
    u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
    u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
  }
  // Column 4L + q gathers lane L of u[q], u[4+q], u[8+q], u[12+q].
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    const __m512 rows0to7_lanes01 = _mm512_shuffle_f32x4(u[q], u[4 + q], 0x44);
    const __m512 rows0to7_lanes23 = _mm512_shuffle_f32x4(u[q], u[4 + q], 0xEE);
    const __m512 rows8to15_lanes01 = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0x44);
    const __m512 rows8to15_lanes23 = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0xEE);
    r[q] = _mm512_shuffle_f32x4(rows0to7_lanes01, rows8to15_lanes01, 0x88);
    r[4 + q] = _mm512_shuffle_f32x4(rows0to7_lanes01, rows8to15_lanes01, 0xDD);
    r[8 + q] = _mm512_shuffle_f32x4(rows0to7_lanes23, rows8to15_lanes23, 0x88);
    r[12 + q] = _mm512_shuffle_f32x4(rows0to7_lanes23, rows8to15_lanes23, 0xDD);
  }
}

}  // namespace

// Ragged squares (rows or cols not a multiple of 16) read zeros for the
// missing rows and columns and write only the real ones.
void block_transpose(float* __restrict dst, int64_t ldd, const float* __restrict src, int64_t lds,
                     int64_t rows, int64_t cols) {
  for (int64_t j0 = 0; j0 < rows; j0 += 16) {
    const int64_t nr = rows - j0 < 16 ? rows - j0 : 16;
    const __mmask16 row_lanes = static_cast<__mmask16>((1u << nr) - 1u);
    for (int64_t c0 = 0; c0 < cols; c0 += 16) {
      const int64_t nc = cols - c0 < 16 ? cols - c0 : 16;
      const __mmask16 col_lanes = static_cast<__mmask16>((1u << nc) - 1u);
      __m512 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i)
        r[i] = i < nr ? _mm512_maskz_loadu_ps(col_lanes, src + (j0 + i) * lds + c0)
                      : _mm512_setzero_ps();
      transpose16(r);
#pragma GCC unroll 16
      for (int c = 0; c < 16; ++c)
        if (c < nc) _mm512_mask_storeu_ps(dst + (c0 + c) * ldd + j0, row_lanes, r[c]);
    }
  }
}

#pragma GCC diagnostic pop

#else

void block_transpose(float* __restrict dst, int64_t ldd, const float* __restrict src, int64_t lds,
                     int64_t rows, int64_t cols) {
  for (int64_t j = 0; j < rows; ++j)
    for (int64_t c = 0; c < cols; ++c) dst[c * ldd + j] = src[j * lds + c];
}

#endif

}  // namespace kernels
