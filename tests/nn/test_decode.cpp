// The KV-cache decoder against the full forward pass, position by position,
// including past block_size where the context is cropped.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/kernels/bf16.h"
#include "model_fixture.h"
#include "nn/decode.h"
#include "nn/sampling.h"
#include "support/no_skip.h"

namespace {

// The default model and one per model option (Note [Model choices]); the
// last combines the modern ones (RoPE rotates q and the cached k).
std::vector<nn::GPTConfig> option_configs() {
  std::vector<nn::GPTConfig> cs(7, testing::tiny_config());
  cs[1].pos_encoding = nn::PosEncoding::Sinusoidal;
  cs[2].pos_encoding = nn::PosEncoding::Rope;
  cs[3].norm = nn::NormKind::RMSNorm;
  cs[4].mlp = nn::MlpKind::Relu2;
  cs[5].mlp = nn::MlpKind::Swiglu;
  cs[6].pos_encoding = nn::PosEncoding::Rope;
  cs[6].norm = nn::NormKind::RMSNorm;
  cs[6].mlp = nn::MlpKind::Swiglu;
  return cs;
}

}  // namespace

TEST_CASE("decoder logits equal the full forward's at every position", "[decode]") {
  for (const nn::GPTConfig& c : option_configs()) {
    INFO("pos " << nn::pos_encoding_name(c.pos_encoding) << ", norm " << static_cast<int>(c.norm)
                << ", mlp " << static_cast<int>(c.mlp));
    const nn::GPT m = testing::tiny_model(c, 7, 1.0f);
    const testing::Batch b = testing::tiny_batch(1, c.block_size, c.vocab_size);
    autograd::Arena arena;
    autograd::OpContext ctx{&arena, nullptr};
    autograd::Tensor full = nn::gpt_forward(ctx, m, b.inputs.data(), 1, b.T);
    nn::Decoder dec(m);
    for (int64_t t = 0; t < b.T; ++t) {
      const float* logits = dec.step(b.inputs[t]);
      for (int64_t v = 0; v < c.vocab_size; ++v)
        REQUIRE(logits[v] == Approx(full.data[t * c.vocab_size + v]).margin(1e-4));
    }
  }
}

TEST_CASE("past block_size the decoder matches a forward over the cropped context", "[decode]") {
  for (const nn::GPTConfig& c : option_configs()) {  // block_size 8
    INFO("pos " << nn::pos_encoding_name(c.pos_encoding) << ", norm " << static_cast<int>(c.norm)
                << ", mlp " << static_cast<int>(c.mlp));
    const nn::GPT m = testing::tiny_model(c, 7, 1.0f);
    const testing::Batch b = testing::tiny_batch(1, 8, c.vocab_size);
    nn::Decoder dec(m);
    for (int64_t t = 0; t < 8; ++t) dec.step(b.inputs[t]);
    // The 9th token: the cache keeps the newest 4 and re-encodes them.
    const int32_t next = 3;
    const float* logits = dec.step(next);
    std::vector<int32_t> ctx_ids(b.inputs.end() - 4, b.inputs.end());
    ctx_ids.push_back(next);
    autograd::Arena arena;
    autograd::OpContext ctx{&arena, nullptr};
    autograd::Tensor full = nn::gpt_forward(ctx, m, ctx_ids.data(), 1, 5);
    for (int64_t v = 0; v < c.vocab_size; ++v)
      REQUIRE(logits[v] == Approx(full.data[4 * c.vocab_size + v]).margin(1e-4));
    CHECK(dec.length() == 5);
  }
}

TEST_CASE("token sampler: greedy, top-k, top-p and seeded draws", "[sampling]") {
  std::vector<float> logits = {0.0f, 3.0f, 1.0f, 2.9f, -5.0f};
  nn::TokenSampler s(5);
  tg::Rng rng(1);
  nn::SamplingOptions greedy;
  greedy.temperature = 0.0f;
  CHECK(s.sample(logits.data(), greedy, rng) == 1);
  nn::SamplingOptions top2;
  top2.top_k = 2;
  for (int i = 0; i < 200; ++i) {
    const int32_t t = s.sample(logits.data(), top2, rng);
    REQUIRE((t == 1 || t == 3));
  }
  nn::SamplingOptions nucleus;
  nucleus.top_p = 0.01f;  // only the single most likely token
  for (int i = 0; i < 50; ++i) REQUIRE(s.sample(logits.data(), nucleus, rng) == 1);
  tg::Rng a(9), b(9);
  nn::SamplingOptions plain;
  for (int i = 0; i < 50; ++i) REQUIRE(s.sample(logits.data(), plain, a) == s.sample(logits.data(), plain, b));
}

TEST_CASE("in bf16 the decoder rounds what the forward rounds", "[decode][bf16]") {
  if (!kernels::bf16_matmul_available()) {
    if (test_support::no_skip()) FAIL("oneDNN has no bf16 matmul here, under TAPEGPT_NO_SKIP=1");
    WARN("oneDNN has no bf16 matmul here: the bf16 decoder is not checked");
    return;
  }
  for (const nn::GPTConfig& c : option_configs()) {
    INFO("pos " << nn::pos_encoding_name(c.pos_encoding) << ", norm " << static_cast<int>(c.norm)
                << ", mlp " << static_cast<int>(c.mlp));
    nn::GPT m = testing::tiny_model(c, 7, 1.0f);
    nn::split_masters(m.store);  // a bf16 run's store (train::set_precision)
    const testing::Batch b = testing::tiny_batch(1, c.block_size, c.vocab_size);
    autograd::Arena arena;
    autograd::OpContext ctx{&arena, nullptr, nn::run_precision(m.store)};
    autograd::Tensor full = nn::gpt_forward(ctx, m, b.inputs.data(), 1, b.T);
    nn::Decoder dec(m);
    double worst = 0.0;
    for (int64_t t = 0; t < b.T; ++t) {
      const float* logits = dec.step(b.inputs[t]);
      for (int64_t v = 0; v < c.vocab_size; ++v)
        worst = std::max(worst, std::fabs(double(logits[v]) - full.data[t * c.vocab_size + v]));
    }
    CHECK(worst <= 1e-4);
  }
}
