// The block kernels under blockwise attention: block_mac against the plain
// one-element-at-a-time fma chain, bit for bit (memcmp) on ragged shapes with
// both a operand layouts and strided rows (Note [Attention micro-kernel] in
// autograd/kernels/block_kernels.cpp), and block_transpose against the index
// formula.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "autograd/base/rng.h"
#include "autograd/kernels/block_kernels.h"
#include "support/gradcheck.h"

namespace {

// One rounding per term where the target has a fast fma (where GCC contracts
// `c += a * b`), two where it has none: what the old plain loop computed.
float mac_reference(float a, float b, float c) {
#if defined(__FP_FAST_FMAF)
  return std::fma(a, b, c);
#else
  return c + a * b;
#endif
}

// c[i, j] = chain over x = 0…k-1 of mac(a(i, x), b[x, j], c[i, j]), or over
// x = k-1…0 with `reversed` (a different order, to show the test can see one).
void reference_block_mac(float* c, int64_t ldc, const float* a, int64_t sai, int64_t sax,
                         const float* b, int64_t ldb, int64_t m, int64_t n, int64_t k,
                         bool reversed = false) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = c[i * ldc + j];
      for (int64_t t = 0; t < k; ++t) {
        const int64_t x = reversed ? k - 1 - t : t;
        acc = mac_reference(a[i * sai + x * sax], b[x * ldb + j], acc);
      }
      c[i * ldc + j] = acc;
    }
}

struct Operands {
  std::vector<float> a, b, c;
  int64_t sai, sax, ldb, ldc;
};

// Random a, b and c (c is accumulated into) with rows longer than the block
// (ldb, ldc > n; the padding must come out untouched). a is m×k row-major
// (ld k + 3) or, transposed, k×m (ld m + 5).
Operands random_operands(int64_t m, int64_t n, int64_t k, bool transposed, tg::Rng& rng) {
  Operands o;
  o.ldb = n + 7;
  o.ldc = n + 9;
  const int64_t lda = transposed ? m + 5 : k + 3;
  o.sai = transposed ? 1 : lda;
  o.sax = transposed ? lda : 1;
  o.a = testing::random_vector<float>((transposed ? k : m) * lda, rng);
  o.b = testing::random_vector<float>(k * o.ldb, rng);
  o.c = testing::random_vector<float>(m * o.ldc, rng, 4.0);
  return o;
}

const int64_t kSizes[] = {1, 2, 3, 4, 5, 8, 15, 16, 17, 31, 33, 48, 63, 64};

}  // namespace

TEST_CASE("block_mac is bit-identical to the plain fma chain on ragged shapes", "[block_mac]") {
  tg::Rng rng(20261202);
  int64_t cases = 0;
  for (bool transposed : {false, true})
    for (int64_t m : kSizes)
      for (int64_t n : kSizes)
        for (int64_t k : kSizes) {
          Operands o = random_operands(m, n, k, transposed, rng);
          std::vector<float> want = o.c;
          reference_block_mac(want.data(), o.ldc, o.a.data(), o.sai, o.sax, o.b.data(), o.ldb, m, n, k);
          kernels::block_mac(o.c.data(), o.ldc, o.a.data(), o.sai, o.sax, o.b.data(), o.ldb, m, n, k);
          INFO("m " << m << " n " << n << " k " << k << (transposed ? " (a transposed)" : ""));
          REQUIRE(std::memcmp(o.c.data(), want.data(), want.size() * sizeof(float)) == 0);
          ++cases;
        }
  CHECK(cases == 2 * 14 * 14 * 14);
}

TEST_CASE("block_mac with k = 0 or an empty block leaves c alone", "[block_mac]") {
  tg::Rng rng(7);
  Operands o = random_operands(17, 33, 1, false, rng);
  const std::vector<float> before = o.c;
  kernels::block_mac(o.c.data(), o.ldc, o.a.data(), o.sai, o.sax, o.b.data(), o.ldb, 17, 33, 0);
  kernels::block_mac(o.c.data(), o.ldc, o.a.data(), o.sai, o.sax, o.b.data(), o.ldb, 0, 33, 1);
  kernels::block_mac(o.c.data(), o.ldc, o.a.data(), o.sai, o.sax, o.b.data(), o.ldb, 17, 0, 1);
  REQUIRE(std::memcmp(o.c.data(), before.data(), before.size() * sizeof(float)) == 0);
}

TEST_CASE("the bit comparison sees a change of summation order", "[block_mac]") {
  // The same terms summed in reverse differ in some bits at attention's
  // block size, so memcmp above really pins the order, not just the values.
  tg::Rng rng(11);
  Operands o = random_operands(64, 64, 64, false, rng);
  std::vector<float> reversed = o.c;
  reference_block_mac(reversed.data(), o.ldc, o.a.data(), o.sai, o.sax, o.b.data(), o.ldb, 64, 64, 64, true);
  kernels::block_mac(o.c.data(), o.ldc, o.a.data(), o.sai, o.sax, o.b.data(), o.ldb, 64, 64, 64);
  CHECK(std::memcmp(o.c.data(), reversed.data(), reversed.size() * sizeof(float)) != 0);
}

TEST_CASE("block_transpose copies every element to its mirrored place and nothing else",
          "[block_mac]") {
  tg::Rng rng(3);
  for (int64_t rows : kSizes)
    for (int64_t cols : kSizes) {
      const int64_t lds = cols + 5, ldd = rows + 3;
      const std::vector<float> src = testing::random_vector<float>(rows * lds, rng);
      std::vector<float> dst = testing::random_vector<float>(cols * ldd, rng), want = dst;
      for (int64_t j = 0; j < rows; ++j)
        for (int64_t c = 0; c < cols; ++c) want[c * ldd + j] = src[j * lds + c];
      kernels::block_transpose(dst.data(), ldd, src.data(), lds, rows, cols);
      INFO("rows " << rows << " cols " << cols);
      REQUIRE(std::memcmp(dst.data(), want.data(), want.size() * sizeof(float)) == 0);
    }
}
