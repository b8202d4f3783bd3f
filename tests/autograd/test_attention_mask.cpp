// Causality of the attention kernels, checked directly: probabilities sum to
// 1 per row with exact zeros in the future, and nothing at position t depends
// on any later position, forward or backward.
#include <catch2/catch.hpp>

#include "autograd/kernels/attention_naive.h"
#include "support/gradcheck.h"

using testing::random_vector;
using testing::to_float;
using FVec = std::vector<float>;

TEST_CASE("attention rows sum to 1 with exact zeros above the diagonal", "[kernels][mask]") {
  tg::Rng rng(21);
  const int64_t B = 2, T = 17, C = 32, NH = 4;
  FVec qkv = to_float(random_vector<double>(B * T * 3 * C, rng, 3.0));
  FVec out(B * T * C), att(B * NH * T * T);
  kernels::attention_naive_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
  for (int64_t bh = 0; bh < B * NH; ++bh)
    for (int64_t t = 0; t < T; ++t) {
      const float* row = att.data() + (bh * T + t) * T;
      double sum = 0.0;
      for (int64_t j = 0; j <= t; ++j) {
        CHECK(row[j] > 0.0f);
        sum += row[j];
      }
      CHECK(sum == Approx(1.0).epsilon(1e-6));
      for (int64_t j = t + 1; j < T; ++j) REQUIRE(row[j] == 0.0f);
    }
}

TEST_CASE("changing a future position changes no earlier output", "[kernels][mask]") {
  tg::Rng rng(22);
  const int64_t B = 1, T = 12, C = 16, NH = 2;
  FVec qkv = to_float(random_vector<double>(B * T * 3 * C, rng));
  FVec out(T * C), att(NH * T * T);
  kernels::attention_naive_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
  for (int64_t changed = 1; changed < T; ++changed) {
    FVec qkv2 = qkv, out2(T * C), att2(NH * T * T);
    for (int64_t c = 0; c < 3 * C; ++c) qkv2[changed * 3 * C + c] += 1.0f;  // its q, k and v
    kernels::attention_naive_forward(out2.data(), att2.data(), qkv2.data(), B, T, C, NH);
    for (int64_t t = 0; t < changed; ++t)
      for (int64_t c = 0; c < C; ++c) REQUIRE(out2[t * C + c] == out[t * C + c]);
    bool later_changed = false;
    for (int64_t c = 0; c < C; ++c) later_changed |= out2[changed * C + c] != out[changed * C + c];
    CHECK(later_changed);
  }
}

TEST_CASE("a gradient at position t reaches no later position", "[kernels][mask]") {
  tg::Rng rng(23);
  const int64_t B = 1, T = 10, C = 16, NH = 2;
  FVec qkv = to_float(random_vector<double>(B * T * 3 * C, rng));
  FVec out(T * C), att(NH * T * T), scratch(NH * T * T);
  kernels::attention_naive_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
  for (int64_t t = 0; t < T; ++t) {
    FVec dout(T * C, 0.0f), dqkv(T * 3 * C, 0.0f);
    for (int64_t c = 0; c < C; ++c) dout[t * C + c] = 1.0f;
    kernels::attention_naive_backward(dqkv.data(), scratch.data(), dout.data(), qkv.data(), att.data(), B, T, C, NH);
    for (int64_t j = t + 1; j < T; ++j)
      for (int64_t c = 0; c < 3 * C; ++c) REQUIRE(dqkv[j * 3 * C + c] == 0.0f);
  }
}
