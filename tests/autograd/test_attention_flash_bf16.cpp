// Attention's bf16 products (Note [bf16 attention products] in
// autograd/kernels/attention_flash.cpp): the packing of bf16 pairs against
// float_to_bf16 value by value, block_mac_bf16 against a double sum of the
// same bf16 values, and the bf16 flash kernels against the double reference
// (to bf16's precision) and their causality (dropout and thread counts:
// test_attention_flash.cpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "autograd/kernels/attention_flash.h"
#include "autograd/kernels/bf16.h"
#include "autograd/kernels/block_kernels_bf16.h"
#include "autograd/kernels/reference.h"
#include "support/bits.h"
#include "support/gradcheck.h"

namespace ref = kernels::reference;
using testing::random_vector;
using testing::same_bits;
using testing::to_float;
using Vec = std::vector<double>;
using FVec = std::vector<float>;

namespace {

float low_value(uint32_t pair) { return kernels::bf16_to_float(static_cast<uint16_t>(pair)); }
float high_value(uint32_t pair) { return kernels::bf16_to_float(static_cast<uint16_t>(pair >> 16)); }
uint32_t bits_of(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

// Random floats with the special values float_to_bf16 treats apart among them.
FVec floats_with_specials(int64_t n, tg::Rng& rng) {
  FVec x = to_float(random_vector<double>(n, rng, 3.0));
  const float specials[] = {std::numeric_limits<float>::infinity(), -0.0f, std::nanf(""), 1e-41f,
                            3.4e38f, 1.00390625f /* a tie: 1 + 2^-8 */};
  for (size_t i = 0; i < sizeof specials / sizeof specials[0] && i < x.size(); ++i) x[i * 7 % x.size()] = specials[i];
  return x;
}

}  // namespace

TEST_CASE("pack_row_pairs pairs rows two by two, rounded as float_to_bf16", "[kernels][bf16-attention]") {
  tg::Rng rng(51);
  for (int64_t rows : {1, 2, 7, 64}) {
    for (int64_t cols : {1, 5, 16, 33, 64}) {
      INFO("rows " << rows << " cols " << cols);
      const int64_t lds = cols + 3, ldd = cols + 2, pairs = (rows + 1) / 2;
      const FVec src = floats_with_specials(rows * lds, rng);
      std::vector<uint32_t> dst(static_cast<size_t>(pairs * ldd), 0xdeadbeefu);
      kernels::pack_row_pairs(dst.data(), ldd, src.data(), lds, rows, cols);
      int64_t wrong = 0;
      for (int64_t p = 0; p < pairs; ++p)
        for (int64_t j = 0; j < ldd; ++j) {
          const uint32_t got = dst[static_cast<size_t>(p * ldd + j)];
          if (j >= cols) {
            wrong += got != 0xdeadbeefu;  // past the block: untouched
            continue;
          }
          const uint16_t lo = kernels::float_to_bf16(src[static_cast<size_t>(2 * p * lds + j)]);
          const uint16_t hi = 2 * p + 1 < rows ? kernels::float_to_bf16(src[static_cast<size_t>((2 * p + 1) * lds + j)]) : 0;
          wrong += got != (static_cast<uint32_t>(lo) | static_cast<uint32_t>(hi) << 16);
        }
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("round_rows_bf16 rounds each row and pads an odd one with 0", "[kernels][bf16-attention]") {
  tg::Rng rng(52);
  for (int64_t rows : {1, 3, 64}) {
    for (int64_t cols : {1, 2, 17, 64}) {
      INFO("rows " << rows << " cols " << cols);
      const int64_t lds = cols + 5, ldd = cols + 4 + cols % 2;
      const FVec src = floats_with_specials(rows * lds, rng);
      std::vector<uint16_t> dst(static_cast<size_t>(rows * ldd), 0xbeef);
      kernels::round_rows_bf16(dst.data(), ldd, src.data(), lds, rows, cols);
      int64_t wrong = 0;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t x = 0; x < ldd; ++x) {
          const uint16_t got = dst[static_cast<size_t>(i * ldd + x)];
          const uint16_t want = x < cols                      ? kernels::float_to_bf16(src[static_cast<size_t>(i * lds + x)])
                                : x == cols && cols % 2 == 1 ? 0
                                                             : 0xbeef;
          wrong += got != want;
        }
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("block_mac_bf16 adds the products of bf16 pairs, summed in float32", "[kernels][bf16-attention]") {
  // Against the double sum of the same bf16 values: each term is exact in
  // float32, so the only error is float32 summation, at most about
  // (2·kp + 1)·2^-24·Σ|terms| (Note [Tolerances from float32 rounding] in
  // test_kernels_vs_reference.cpp); a wrong pair or index is off by O(1).
  tg::Rng rng(53);
  for (bool transposed : {false, true}) {
    for (int64_t m : {1, 3, 4, 17, 64}) {
      for (int64_t n : {1, 15, 16, 33, 64}) {
        for (int64_t kp : {0, 1, 5, 32}) {
          INFO("transposed " << transposed << " m " << m << " n " << n << " kp " << kp);
          // a(i, p) at a[i·sai + p·sap]: rows of pairs, or pairs down columns.
          const int64_t lda = transposed ? m + 3 : kp + 2, sai = transposed ? 1 : lda, sap = transposed ? lda : 1;
          const int64_t ldb = n + 5, ldc = n + 7;
          const FVec af = to_float(random_vector<double>(2 * (transposed ? kp : m) * lda, rng));
          const FVec bf = to_float(random_vector<double>(2 * kp * ldb + 2, rng));
          std::vector<uint32_t> a(af.size() / 2), b(bf.size() / 2);
          kernels::round_rows_bf16(reinterpret_cast<uint16_t*>(a.data()), static_cast<int64_t>(af.size()), af.data(),
                                   static_cast<int64_t>(af.size()), 1, static_cast<int64_t>(af.size()));
          kernels::round_rows_bf16(reinterpret_cast<uint16_t*>(b.data()), static_cast<int64_t>(bf.size()), bf.data(),
                                   static_cast<int64_t>(bf.size()), 1, static_cast<int64_t>(bf.size()));
          FVec c = to_float(random_vector<double>(m * ldc, rng));
          const FVec c0 = c;
          kernels::block_mac_bf16(c.data(), ldc, a.data(), sai, sap, b.data(), ldb, m, n, kp);
          double worst = 0.0;
          int64_t padding_touched = 0;
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < ldc; ++j) {
              const size_t at = static_cast<size_t>(i * ldc + j);
              if (j >= n) {
                padding_touched += bits_of(c[at]) != bits_of(c0[at]);
                continue;
              }
              double want = c0[at], magnitude = std::fabs(c0[at]);
              for (int64_t p = 0; p < kp; ++p) {
                const uint32_t x = a[static_cast<size_t>(i * sai + p * sap)], y = b[static_cast<size_t>(p * ldb + j)];
                const double t = static_cast<double>(low_value(x)) * low_value(y) +
                                 static_cast<double>(high_value(x)) * high_value(y);
                want += t;
                magnitude += std::fabs(static_cast<double>(low_value(x)) * low_value(y)) +
                             std::fabs(static_cast<double>(high_value(x)) * high_value(y));
              }
              const double bound = (2.0 * static_cast<double>(kp) + 1.0) * std::ldexp(1.0, -24) * magnitude;
              worst = std::max(worst, std::fabs(c[at] - want) / std::max(bound, 1e-30));
            }
          CHECK(padding_touched == 0);
          CHECK(worst <= 1.0);
        }
      }
    }
  }
}

namespace {

struct Shape {
  int64_t B, T, NH, HS;
  int64_t C() const { return NH * HS; }
};
// Around one and two 64-row blocks, odd lengths and odd head sizes (pairs
// with a missing partner on both the time and the channel side).
const Shape kShapes[] = {{1, 1, 1, 8}, {2, 7, 3, 16}, {1, 64, 2, 48}, {2, 65, 4, 8}, {1, 130, 2, 24}, {1, 129, 3, 5}};

// |got - want| ≤ tol · max(1, max|want|). bf16 operands carry 2^-9 relative
// error each; over rows of up to 130 random-signed terms that stays near
// 1e-3 of the scale, so 1e-2 passes rounding and fails any wrong index.
void require_close(const FVec& got, const Vec& want, double tol) {
  REQUIRE(got.size() == want.size());
  const double scale = std::max(1.0, testing::max_abs(want));
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
  INFO("worst abs diff " << worst << " scale " << scale);
  CHECK(worst <= tol * scale);
}

}  // namespace

TEST_CASE("bf16 flash attention matches the double reference to bf16's precision", "[kernels][bf16-attention]") {
  tg::Rng rng(54);
  for (const Shape& sh : kShapes) {
    const int64_t B = sh.B, T = sh.T, NH = sh.NH, C = sh.C();
    INFO("B " << B << " T " << T << " NH " << NH << " HS " << sh.HS);
    const Vec qkv = random_vector<double>(B * T * 3 * C, rng, 2.0), dout = random_vector<double>(B * T * C, rng);
    Vec out(B * T * C), att(B * NH * T * T), dqkv = random_vector<double>(qkv.size(), rng);
    ref::attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
    FVec fqkv = to_float(qkv), fdout = to_float(dout), fdqkv = to_float(dqkv);  // gradients added to
    ref::attention_backward(dqkv.data(), dout.data(), qkv.data(), att.data(), B, T, C, NH);
    FVec fout(B * T * C), flse(B * NH * T), f32out(B * T * C), f32lse(B * NH * T);
    kernels::attention_flash_forward_bf16(fout.data(), flse.data(), fqkv.data(), B, T, C, NH);
    kernels::attention_flash_backward_bf16(fdqkv.data(), fdout.data(), fout.data(), fqkv.data(), flse.data(), B, T,
                                           C, NH);
    require_close(fout, out, 1e-2);
    require_close(fdqkv, dqkv, 1e-2);
    // The scores stay float32, so the log-sum-exp is the float32 kernel's.
    kernels::attention_flash_forward(f32out.data(), f32lse.data(), fqkv.data(), B, T, C, NH);
    CHECK(same_bits(flse, f32lse));
    if (T > 2 && sh.HS > 2) CHECK_FALSE(same_bits(fout, f32out));  // and the products really are bf16
  }
}

TEST_CASE("bf16 flash attention: no output or gradient crosses from the future", "[kernels][bf16-attention][mask]") {
  tg::Rng rng(56);
  const int64_t B = 1, T = 131, C = 10, NH = 2;  // odd T and odd head size: padded pairs everywhere
  const FVec qkv = to_float(random_vector<double>(B * T * 3 * C, rng));
  FVec out(T * C), lse(NH * T);
  kernels::attention_flash_forward_bf16(out.data(), lse.data(), qkv.data(), B, T, C, NH);
  for (int64_t changed : {1, 63, 64, 65, 129, 130}) {
    INFO("changed " << changed);
    FVec qkv2 = qkv, out2(T * C), lse2(NH * T);
    for (int64_t c = 0; c < 3 * C; ++c) qkv2[changed * 3 * C + c] += 1.0f;
    kernels::attention_flash_forward_bf16(out2.data(), lse2.data(), qkv2.data(), B, T, C, NH);
    int64_t earlier_moved = 0;
    for (int64_t t = 0; t < changed; ++t)
      for (int64_t c = 0; c < C; ++c) earlier_moved += out2[t * C + c] != out[t * C + c];
    CHECK(earlier_moved == 0);
  }
  for (int64_t t : {0, 62, 63, 64, 129, 130}) {
    INFO("gradient at t " << t);
    FVec dout(T * C, 0.0f), dqkv(T * 3 * C, 0.0f);
    for (int64_t c = 0; c < C; ++c) dout[t * C + c] = 1.0f;
    kernels::attention_flash_backward_bf16(dqkv.data(), dout.data(), out.data(), qkv.data(), lse.data(), B, T, C, NH);
    int64_t later = 0;
    for (int64_t j = t + 1; j < T; ++j)
      for (int64_t c = 0; c < 3 * C; ++c) later += dqkv[j * 3 * C + c] != 0.0f;
    CHECK(later == 0);
    bool reached = false;  // its own v always gets a gradient
    for (int64_t c = 0; c < C; ++c) reached |= dqkv[t * 3 * C + 2 * C + c] != 0.0f;
    CHECK(reached);
  }
}
