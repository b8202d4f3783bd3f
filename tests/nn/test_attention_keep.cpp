// gpt_forward's attention_probs: keeping the probabilities changes nothing
// else, every layer's rows are probabilities of the causal mask, and what it
// keeps (from the blockwise training kernel) equals what the naive T×T kernel
// computes, called directly on the first layer's own qkv.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/kernels/attention_naive.h"
#include "model_fixture.h"

TEST_CASE("gpt_forward keeps every layer's attention probabilities", "[model][attention]") {
  nn::GPTConfig c = testing::tiny_config();
  c.block_size = 70;  // past one 64-row block of the flash kernel
  c.n_head = 4;
  const nn::GPT m = testing::tiny_model(c, 7, 3.0f);
  const int64_t T = 67, L = c.n_layer, NH = c.n_head, C = c.n_embd;
  const testing::Batch b = testing::tiny_batch(1, T, c.vocab_size);

  autograd::Arena arena;
  autograd::OpContext ctx{&arena, nullptr};
  auto run = [&](float* probs) {
    autograd::Tensor logits = nn::gpt_forward(ctx, m, b.inputs.data(), 1, T, 0, probs);
    return std::vector<float>(logits.data, logits.data + logits.numel());
  };
  std::vector<float> kept(L * NH * T * T, -1.0f);
  const std::vector<float> plain = run(nullptr);
  CHECK(run(kept.data()) == plain);  // bit for bit: keeping is read-only

  double worst_sum = 0.0;
  int64_t future_nonzero = 0;
  for (int64_t r = 0; r < L * NH * T; ++r) {
    const int64_t t = r % T;
    double sum = 0.0;
    for (int64_t j = 0; j < T; ++j) {
      const float p = kept[r * T + j];
      if (j > t) future_nonzero += p != 0.0f;
      else sum += p;
    }
    worst_sum = std::max(worst_sum, std::fabs(sum - 1.0));
  }

  // The first layer's qkv, as gpt_forward computes it, through the naive kernel.
  const nn::BlockWeights& b0 = m.blocks[0];
  autograd::Tensor x = autograd::embedding(ctx, b.inputs.data(), 1, T, m.wte, m.wpe);
  x = autograd::layernorm(ctx, x, b0.ln_1_weight, b0.ln_1_bias);
  const autograd::Tensor qkv = autograd::linear(ctx, x, b0.c_attn_weight, b0.c_attn_bias);
  std::vector<float> out(T * C), naive(NH * T * T);
  kernels::attention_naive_forward(out.data(), naive.data(), qkv.data, 1, T, C, NH);
  double worst_diff = 0.0;
  for (int64_t i = 0; i < NH * T * T; ++i)
    worst_diff = std::max(worst_diff, std::fabs(double(kept[i]) - naive[i]));

  INFO("worst |row sum - 1| " << worst_sum << ", worst |kept - naive| in layer 0 " << worst_diff);
  CHECK(future_nonzero == 0);
  CHECK(worst_sum <= 1e-6);
  // Measured 6e-8; tests/autograd/test_attention_probs.cpp explains 1e-6.
  CHECK(worst_diff <= 1e-6);
}
