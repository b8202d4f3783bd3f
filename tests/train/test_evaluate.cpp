// Windowed evaluation scores every target exactly once, and its loss equals
// a direct per-position computation.
#include <catch2/catch.hpp>

#include <cmath>

#include "autograd/ops.h"
#include "nn/decode.h"
#include "nn/gpt.h"
#include "support/tiny_config.h"
#include "train/evaluate.h"

namespace {

nn::GPT small_model() {
  nn::GPTConfig c = testing::tiny_config();
  c.vocab_size = 13;
  c.n_layer = 1;
  nn::GPT m = nn::gpt_create(c);
  nn::gpt_init(m, 3);
  return m;
}

}  // namespace

TEST_CASE("non-overlapping windows score each of the N-1 targets once", "[eval]") {
  const nn::GPT m = small_model();
  std::vector<int32_t> ids(45);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 7) % 13);
  train::TokenSource src{static_cast<int64_t>(ids.size()), [&](int32_t* d, int64_t s, int64_t n) {
                           std::copy_n(ids.data() + s, n, d);
                         }};
  autograd::Arena arena;
  for (int64_t batch : {1, 3, 8}) {
    train::EvalOptions o;
    o.batch_size = batch;
    const train::EvalResult r = train::evaluate_tokens(m, src, o, arena);
    CHECK(r.tokens == 44);
    // Direct: each window of 8 (the last of 4) from the start, all its targets.
    double direct = 0.0;
    for (int64_t begin = 0; begin < 44; begin += 8) {
      const int64_t len = std::min<int64_t>(8, 44 - begin);
      autograd::Arena a;
      autograd::OpContext ctx{&a, nullptr};
      autograd::Tensor logits = nn::gpt_forward(ctx, m, ids.data() + begin, 1, len);
      std::vector<float> losses(len);
      autograd::cross_entropy(ctx, std::move(logits), ids.data() + begin + 1, losses.data());
      for (float l : losses) direct += l;
    }
    CHECK(r.loss_sum == Approx(direct).epsilon(1e-6));
  }
}

TEST_CASE("sliding windows score each target once with up to block_size context", "[eval]") {
  const nn::GPT m = small_model();
  std::vector<int32_t> ids(30);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 5 + 1) % 13);
  train::TokenSource src{static_cast<int64_t>(ids.size()), [&](int32_t* d, int64_t s, int64_t n) {
                           std::copy_n(ids.data() + s, n, d);
                         }};
  autograd::Arena arena;
  train::EvalOptions o;
  o.stride = 3;
  const train::EvalResult r = train::evaluate_tokens(m, src, o, arena);
  CHECK(r.tokens == 29);
  // Direct: target t (1…29) predicted from the last min(8, t) tokens before it,
  // except the first window, whose targets all see the window's start.
  double direct = 0.0;
  for (int64_t t = 1; t < 30; ++t) {
    int64_t begin;
    if (t <= 8) {
      begin = 0;
    } else {
      // the window that scores t ends at the first multiple-of-3 boundary ≥ t past 8
      int64_t end = 8;
      while (end < t) end = std::min<int64_t>(end + 3, 29);
      begin = end - 8;
    }
    autograd::Arena a;
    autograd::OpContext ctx{&a, nullptr};
    const int64_t len = t - begin;
    autograd::Tensor logits = nn::gpt_forward(ctx, m, ids.data() + begin, 1, len);
    std::vector<float> losses(len);
    autograd::cross_entropy(ctx, std::move(logits), ids.data() + begin + 1, losses.data());
    direct += losses[len - 1];
  }
  CHECK(r.loss_sum == Approx(direct).epsilon(1e-5));
}

// Note [Spread evaluation]: M of the split's W windows, window
// floor((k + 1/2) W / M) for k < M, each scored as the whole-split pass
// scores it, the same windows every time.
TEST_CASE("a partial evaluation scores windows spread evenly over the whole split", "[eval]") {
  const nn::GPT m = small_model();  // block_size 8
  std::vector<int32_t> ids(85);     // 84 targets: 10 full windows and one of 4
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 11 + 3) % 13);
  train::TokenSource src{static_cast<int64_t>(ids.size()), [&](int32_t* d, int64_t s, int64_t n) {
                           std::copy_n(ids.data() + s, n, d);
                         }};
  CHECK(train::count_eval_windows(85, 8) == 11);
  CHECK(train::count_eval_windows(85, 8, 3) == 1 + (76 + 2) / 3);
  CHECK(train::count_eval_windows(1, 8) == 0);
  // The loss of whole-split window j (non-overlapping: targets 8j+1 … 8j+len).
  const auto window_loss = [&](int64_t j) {
    const int64_t begin = 8 * j, len = std::min<int64_t>(8, 84 - begin);
    autograd::Arena a;
    autograd::OpContext ctx{&a, nullptr};
    autograd::Tensor logits = nn::gpt_forward(ctx, m, ids.data() + begin, 1, len);
    std::vector<float> losses(len);
    autograd::cross_entropy(ctx, std::move(logits), ids.data() + begin + 1, losses.data());
    double sum = 0.0;
    for (float l : losses) sum += l;
    return std::make_pair(sum, len);
  };
  autograd::Arena arena;
  for (int64_t M : {1, 2, 3, 5, 10}) {
    for (int64_t batch : {1, 4}) {
      train::EvalOptions o;
      o.batch_size = batch;
      o.max_windows = M;
      const train::EvalResult r = train::evaluate_tokens(m, src, o, arena);
      CHECK(r.windows == M);
      CHECK(r.split_windows == 11);
      CHECK_FALSE(r.whole());
      double direct = 0.0;
      int64_t tokens = 0;
      for (int64_t k = 0; k < M; ++k) {
        const auto [sum, len] = window_loss((2 * k + 1) * 11 / (2 * M));
        direct += sum;
        tokens += len;
      }
      CHECK(r.tokens == tokens);
      CHECK(r.loss_sum == Approx(direct).epsilon(1e-6));
    }
  }
  // At or above the split's window count it is the whole split.
  for (int64_t M : {11, 50}) {
    train::EvalOptions o;
    o.max_windows = M;
    const train::EvalResult r = train::evaluate_tokens(m, src, o, arena);
    CHECK(r.whole());
    CHECK(r.tokens == 84);
  }
}

TEST_CASE("the last evaluation scores the whole split unless that costs over ten partial ones", "[eval]") {
  CHECK(train::final_eval_is_whole(0, 1000));  // --eval-steps 0: every evaluation is whole
  CHECK(train::final_eval_is_whole(100, 1000));
  CHECK_FALSE(train::final_eval_is_whole(99, 1000));
}
