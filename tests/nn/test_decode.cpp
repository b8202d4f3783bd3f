// The KV-cache forward (Note [KV-cache forward] in nn/gpt.cpp) against the
// full forward pass, position by position, for every model option; a prompt
// read in one pass against the same prompt read a token at a time; and the
// decoder's context shift past block_size.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/kernels/bf16.h"
#include "model_fixture.h"
#include "nn/decode.h"
#include "nn/kv_cache.h"
#include "nn/sampling.h"
#include "support/no_skip.h"

namespace {

// The default model and one per model option (Note [Model choices]); the
// last combines the modern ones (RoPE rotates q and the cached k).
std::vector<nn::GPTConfig> option_configs() {
  std::vector<nn::GPTConfig> cs(13, testing::tiny_config());
  cs[1].pos_encoding = nn::PosEncoding::Sinusoidal;
  cs[2].pos_encoding = nn::PosEncoding::Rope;
  cs[3].norm = nn::NormKind::RMSNorm;
  cs[4].mlp = nn::MlpKind::Relu2;
  cs[5].mlp = nn::MlpKind::Swiglu;
  cs[6].pos_encoding = nn::PosEncoding::Rope;
  cs[6].norm = nn::NormKind::RMSNorm;
  cs[6].mlp = nn::MlpKind::Swiglu;
  cs[7].bias = false;
  cs[8].tied = false;
  cs[9].qk_norm = true;
  cs[10].qk_norm = true;  // after RoPE: the cached k is rotated, then normed
  cs[10].pos_encoding = nn::PosEncoding::Rope;
  cs[11].logit_softcap = 15.0f;  // on every pass's logits, prompt and generated
  cs[12].logit_softcap = 30.0f;
  cs[12].pos_encoding = nn::PosEncoding::Rope;
  cs[12].qk_norm = true;
  return cs;
}

// The option configs, wider: 64 wide, 4 heads, block 48, vocab 65.
std::vector<nn::GPTConfig> wider_option_configs() {
  std::vector<nn::GPTConfig> cs = option_configs();
  for (nn::GPTConfig& c : cs) {
    c.n_embd = 64;
    c.n_head = 4;
    c.block_size = 48;
    c.vocab_size = 65;
  }
  return cs;
}

std::string describe(const nn::GPTConfig& c) {
  return std::string("pos ") + nn::pos_encoding_name(c.pos_encoding) + ", norm " +
         std::to_string(static_cast<int>(c.norm)) + ", mlp " + std::to_string(static_cast<int>(c.mlp)) +
         (c.bias ? ", bias" : ", no bias") + (c.tied ? ", tied" : ", untied") + (c.qk_norm ? ", qk-norm" : "") +
         (c.logit_softcap > 0.0f ? ", softcap " + std::to_string(c.logit_softcap) : "");
}

// Logits [T,V] of ids read one token a call through the cached forward.
std::vector<float> cached_one_at_a_time(const nn::GPT& m, const std::vector<int32_t>& ids) {
  const int64_t V = m.config.vocab_size;
  nn::KvCache cache(m.config);
  autograd::Arena arena;
  std::vector<float> out;
  for (int32_t id : ids) {
    arena.reset();
    autograd::Tensor logits = nn::gpt_forward({&arena, nullptr, nn::run_precision(m.store)}, m, &id, 1, cache);
    out.insert(out.end(), logits.data, logits.data + V);
  }
  return out;
}

// Logits [T,V] of ids read in one cached pass.
std::vector<float> cached_one_pass(const nn::GPT& m, const std::vector<int32_t>& ids) {
  const int64_t T = static_cast<int64_t>(ids.size());
  nn::KvCache cache(m.config);
  autograd::Arena arena;
  autograd::Tensor logits = nn::gpt_forward({&arena, nullptr, nn::run_precision(m.store)}, m, ids.data(), T, cache);
  CHECK(cache.length() == T);
  return std::vector<float>(logits.data, logits.data + T * m.config.vocab_size);
}

double largest_difference(const std::vector<float>& a, const float* b) {
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(double(a[i]) - b[i]));
  return worst;
}

}  // namespace

TEST_CASE("cached logits equal the full forward's at every position", "[decode]") {
  for (const nn::GPTConfig& c : option_configs()) {
    INFO(describe(c));
    const nn::GPT m = testing::tiny_model(c, 7, 1.0f);
    const testing::Batch b = testing::tiny_batch(1, c.block_size, c.vocab_size);
    autograd::Arena arena;
    autograd::Tensor full = nn::gpt_forward({&arena, nullptr, nn::run_precision(m.store)}, m, b.inputs.data(), 1, b.T);
    // A token a call: the one-row kernels, close to the full forward's.
    const std::vector<float> cached = cached_one_at_a_time(m, b.inputs);
    REQUIRE(cached.size() == static_cast<size_t>(b.T * c.vocab_size));
    for (size_t i = 0; i < cached.size(); ++i) REQUIRE(cached[i] == Approx(full.data[i]).margin(1e-4));
    // The whole sequence in one cached pass from position 0: the full
    // forward's kernels on the same rows, so its bits.
    const std::vector<float> one_pass = cached_one_pass(m, b.inputs);
    for (size_t i = 0; i < one_pass.size(); ++i) REQUIRE(one_pass[i] == full.data[i]);
  }
}

TEST_CASE("a prompt read in one pass, or in pieces, gives the logits of one token a call", "[decode]") {
  // Wider than the tiny model so that the matmuls of many rows (sgemm) and
  // of one (sgemv), and the attention of a prompt and of one query, sum in
  // their own orders: the bits may differ, by a few float32 rounding errors
  // of the logits (Note [KV-cache forward]). The pieces after the first
  // attend over cached positions (attention_decode_rows).
  for (const nn::GPTConfig& c : wider_option_configs()) {
    INFO(describe(c));
    const nn::GPT m = testing::tiny_model(c, 7, 1.0f);
    const testing::Batch b = testing::tiny_batch(1, c.block_size, c.vocab_size);
    const std::vector<float> one_at_a_time = cached_one_at_a_time(m, b.inputs);
    const std::vector<float> one_pass = cached_one_pass(m, b.inputs);
    double scale = 0.0;
    for (float l : one_at_a_time) scale = std::max(scale, double(std::fabs(l)));
    CHECK(largest_difference(one_at_a_time, one_pass.data()) <= 1e-5 * std::max(1.0, scale));
    // In pieces: 20 tokens, then 1, then 27, through one cache.
    nn::KvCache cache(c);
    autograd::Arena arena;
    int64_t start = 0;
    for (int64_t n : {20, 1, 27}) {
      arena.reset();
      autograd::Tensor logits = nn::gpt_forward({&arena, nullptr, nn::run_precision(m.store)}, m, b.inputs.data() + start, n, cache);
      const std::vector<float> expected(one_pass.begin() + start * c.vocab_size,
                                        one_pass.begin() + (start + n) * c.vocab_size);
      CHECK(largest_difference(expected, logits.data) <= 1e-5 * std::max(1.0, scale));
      start += n;
    }
    CHECK(cache.length() == c.block_size);
  }
}

TEST_CASE("a pass that wants only the last row's logits gives that row of the all-rows pass", "[decode]") {
  // The head (final norm, output matmul) on one row: its matmul sums each
  // logit in another order than on T rows, so equal to float32 rounding.
  for (const nn::GPTConfig& c : wider_option_configs()) {
    INFO(describe(c));
    const nn::GPT m = testing::tiny_model(c, 7, 1.0f);
    const testing::Batch b = testing::tiny_batch(1, c.block_size, c.vocab_size);
    const std::vector<float> all_rows = cached_one_pass(m, b.inputs);
    const std::vector<float> last(all_rows.end() - c.vocab_size, all_rows.end());
    nn::KvCache cache(c);
    autograd::Arena arena;
    const autograd::Tensor logits = nn::gpt_forward({&arena, nullptr, nn::run_precision(m.store)}, m,
                                                    b.inputs.data(), b.T, cache, nn::Logits::LastRow);
    REQUIRE(logits.numel() == c.vocab_size);
    double scale = 0.0;
    for (float l : last) scale = std::max(scale, double(std::fabs(l)));
    CHECK(largest_difference(last, logits.data) <= 1e-5 * std::max(1.0, scale));
    CHECK(cache.length() == b.T);
  }
}

TEST_CASE("past block_size the decoder matches a forward over the cropped context", "[decode]") {
  for (const nn::GPTConfig& c : option_configs()) {  // block_size 8
    INFO(describe(c));
    const nn::GPT m = testing::tiny_model(c, 7, 1.0f);
    const testing::Batch b = testing::tiny_batch(1, 8, c.vocab_size);
    std::vector<int32_t> ctx_ids(b.inputs.end() - 4, b.inputs.end());
    const int32_t next = 3;
    ctx_ids.push_back(next);
    autograd::Arena arena;
    autograd::Tensor full = nn::gpt_forward({&arena, nullptr, nn::run_precision(m.store)}, m, ctx_ids.data(), 1, 5);
    const std::vector<float> expected(full.data + 4 * c.vocab_size, full.data + 5 * c.vocab_size);
    // The prompt a token at a time, then in one pass; the 9th token makes the
    // cache keep the newest 4 and re-encode them.
    nn::Decoder by_token(m), by_prompt(m), in_one_call(m);
    for (int32_t t : b.inputs) by_token.step(t);
    by_prompt.feed(b.inputs);
    std::vector<int32_t> all = b.inputs;
    all.push_back(next);
    for (nn::Decoder* dec : {&by_token, &by_prompt}) {
      const float* logits = dec->step(next);
      CHECK(largest_difference(expected, logits) <= 1e-4);
      CHECK(dec->length() == 5);
    }
    // Nine tokens in one call: eight in one pass, then the shift.
    CHECK(largest_difference(expected, in_one_call.feed(all)) <= 1e-4);
    CHECK(in_one_call.length() == 5);
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

TEST_CASE("in bf16 the cached forward rounds what the forward rounds", "[decode][bf16]") {
  if (!kernels::bf16_matmul_available()) {
    if (test_support::no_skip()) FAIL("oneDNN has no bf16 matmul here, under TAPEGPT_NO_SKIP=1");
    WARN("oneDNN has no bf16 matmul here: the bf16 cached forward is not checked");
    return;
  }
  for (const nn::GPTConfig& c : option_configs()) {
    INFO(describe(c));
    nn::GPT m = testing::tiny_model(c, 7, 1.0f);
    nn::set_precision(m.store, autograd::Precision::Bf16);  // a bf16 run's store
    const testing::Batch b = testing::tiny_batch(1, c.block_size, c.vocab_size);
    autograd::Arena arena;
    autograd::Tensor full = nn::gpt_forward({&arena, nullptr, nn::run_precision(m.store)}, m, b.inputs.data(), 1, b.T);
    CHECK(largest_difference(cached_one_at_a_time(m, b.inputs), full.data) <= 1e-4);
    CHECK(largest_difference(cached_one_pass(m, b.inputs), full.data) == 0.0);
  }
}
