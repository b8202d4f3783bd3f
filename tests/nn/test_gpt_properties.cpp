// Properties of the GPT forward and backward that gradients alone do not
// show: causality end to end, taped == untaped, tied-weight accumulation,
// parameter names and initialisation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "model_fixture.h"

using testing::Batch;

namespace {

std::vector<float> logits_of(const nn::GPT& m, const Batch& b, autograd::Tape* tape) {
  autograd::Arena arena;
  autograd::OpContext ctx{&arena, tape};
  autograd::Tensor logits = nn::gpt_forward(ctx, m, b.inputs.data(), b.B, b.T);
  return std::vector<float>(logits.data, logits.data + logits.numel());
}

}  // namespace

TEST_CASE("changing a future token changes no earlier logit or loss", "[model][mask]") {
  const nn::GPTConfig c = testing::tiny_config();
  const nn::GPT m = testing::tiny_model(c);
  Batch b = testing::tiny_batch(1, c.block_size, c.vocab_size);
  const std::vector<float> base = logits_of(m, b, nullptr);
  const int64_t V = c.vocab_size;
  for (int64_t t = 1; t < b.T; ++t) {
    Batch changed = b;
    changed.inputs[t] = (changed.inputs[t] + 1) % static_cast<int32_t>(V);
    const std::vector<float> other = logits_of(m, changed, nullptr);
    for (int64_t i = 0; i < t * V; ++i) REQUIRE(other[i] == base[i]);
    bool later_differs = false;
    for (int64_t i = t * V; i < (t + 1) * V; ++i) later_differs |= other[i] != base[i];
    CHECK(later_differs);
  }
  // Per-position losses: a changed final target moves only the final loss.
  autograd::Arena arena;
  autograd::OpContext ctx{&arena, nullptr};
  std::vector<float> l1(b.T), l2(b.T);
  autograd::Tensor logits = nn::gpt_forward(ctx, m, b.inputs.data(), 1, b.T);
  autograd::cross_entropy(ctx, std::move(logits), b.targets.data(), l1.data());
  Batch b2 = b;
  b2.targets[b.T - 1] = (b2.targets[b.T - 1] + 1) % static_cast<int32_t>(V);
  logits = nn::gpt_forward(ctx, m, b2.inputs.data(), 1, b.T);
  autograd::cross_entropy(ctx, std::move(logits), b2.targets.data(), l2.data());
  for (int64_t t = 0; t + 1 < b.T; ++t) CHECK(l1[t] == l2[t]);
}

TEST_CASE("the untaped path gives exactly the taped outputs", "[model]") {
  const nn::GPTConfig c = testing::tiny_config();
  const nn::GPT m = testing::tiny_model(c);
  const Batch b = testing::tiny_batch(3, 5, c.vocab_size);
  autograd::Tape tape;
  const std::vector<float> taped = logits_of(m, b, &tape);
  CHECK(tape.size() > 0);
  CHECK(logits_of(m, b, nullptr) == taped);
}

TEST_CASE("a tied embedding receives the embedding and the output-matrix gradients", "[model]") {
  nn::GPTConfig c = testing::tiny_config();
  nn::GPT tied = testing::tiny_model(c);
  c.tied = false;
  nn::GPT untied = nn::gpt_create(c);
  // Same weights, with lm_head a copy of wte.
  for (const nn::ParamInfo& p : tied.store.table)
    std::copy_n(tied.store.values.floats() + p.offset, p.numel, untied.store.param(p.name));
  std::copy_n(tied.store.param("transformer.wte.weight"), c.vocab_size * c.n_embd,
              untied.store.param("lm_head.weight"));
  const Batch b = testing::tiny_batch(2, 6, c.vocab_size);
  for (nn::GPT* m : {&tied, &untied}) {
    autograd::Arena arena;
    autograd::Tape tape;
    autograd::Tensor loss;
    testing::model_loss(*m, b, arena, &tape, &loss);
    tape.backward(loss);
  }
  const float* g_tied = tied.store.grad("transformer.wte.weight");
  const float* g_emb = untied.store.grad("transformer.wte.weight");
  const float* g_head = untied.store.grad("lm_head.weight");
  double head_norm = 0.0;
  for (int64_t i = 0; i < c.vocab_size * c.n_embd; ++i) {
    head_norm += std::fabs(g_head[i]);
    REQUIRE(g_tied[i] == Approx(g_emb[i] + g_head[i]).margin(1e-5));
  }
  CHECK(head_norm > 0.0);
}

TEST_CASE("parameter names and shapes are nanoGPT's", "[model]") {
  nn::GPTConfig c = testing::tiny_config();
  c.tied = false;
  const nn::ParameterStore s = nn::parameter_store_create(c);
  const int64_t C = c.n_embd;
  struct Want { const char* name; std::vector<int64_t> shape; };
  for (const Want& w : std::vector<Want>{
           {"transformer.wte.weight", {11, C}},
           {"transformer.wpe.weight", {8, C}},
           {"transformer.h.0.ln_1.weight", {C}},
           {"transformer.h.0.ln_1.bias", {C}},
           {"transformer.h.1.attn.c_attn.weight", {3 * C, C}},
           {"transformer.h.1.attn.c_attn.bias", {3 * C}},
           {"transformer.h.1.attn.c_proj.weight", {C, C}},
           {"transformer.h.0.mlp.c_fc.weight", {4 * C, C}},
           {"transformer.h.0.mlp.c_proj.weight", {C, 4 * C}},
           {"transformer.h.0.mlp.c_proj.bias", {C}},
           {"transformer.ln_f.bias", {C}},
           {"lm_head.weight", {11, C}}}) {
    const nn::ParamInfo* p = s.find(w.name);
    REQUIRE(p != nullptr);
    CHECK(p->shape == w.shape);
  }
  CHECK(s.table.size() == 2 + 2 * 12 + 2 + 1);
  CHECK(s.find("transformer.h.2.ln_1.weight") == nullptr);
  c.tied = true;
  c.bias = false;
  const nn::ParameterStore t = nn::parameter_store_create(c);
  CHECK(t.find("lm_head.weight") == nullptr);
  CHECK(t.find("transformer.h.0.attn.c_attn.bias") == nullptr);
}

TEST_CASE("GPT-2 initialisation statistics", "[model]") {
  nn::GPTConfig c;
  c.vocab_size = 512;
  c.block_size = 64;
  c.n_layer = 4;
  c.n_head = 4;
  c.n_embd = 128;
  nn::GPT m = nn::gpt_create(c);
  nn::gpt_init(m, 1234);
  auto stats = [&](const std::string& name) {
    const nn::ParamInfo* p = m.store.find(name);
    const float* d = m.store.values.floats() + p->offset;
    double s = 0.0, s2 = 0.0;
    for (int64_t i = 0; i < p->numel; ++i) { s += d[i]; s2 += double(d[i]) * d[i]; }
    const double mean = s / p->numel;
    return std::make_pair(mean, std::sqrt(s2 / p->numel - mean * mean));
  };
  CHECK(stats("transformer.wte.weight").second == Approx(0.02).epsilon(0.03));
  CHECK(stats("transformer.h.0.mlp.c_fc.weight").second == Approx(0.02).epsilon(0.03));
  CHECK(stats("transformer.h.3.attn.c_proj.weight").second == Approx(0.02 / std::sqrt(8.0)).epsilon(0.03));
  CHECK(stats("transformer.h.3.mlp.c_proj.weight").second == Approx(0.02 / std::sqrt(8.0)).epsilon(0.03));
  CHECK(stats("transformer.h.0.attn.c_attn.bias") == std::make_pair(0.0, 0.0));
  CHECK(stats("transformer.h.0.ln_1.weight").first == 1.0);
  // Same seed, same weights; another seed, other weights.
  nn::GPT again = nn::gpt_create(c);
  nn::gpt_init(again, 1234);
  CHECK(std::equal(m.store.values.floats(), m.store.values.floats() + m.store.total, again.store.values.floats()));
  nn::gpt_init(again, 1235);
  CHECK(!std::equal(m.store.values.floats(), m.store.values.floats() + m.store.total, again.store.values.floats()));
}

TEST_CASE("zero-initialised residual projections: zeros there, every other tensor as before", "[model]") {
  nn::GPTConfig c;
  c.vocab_size = 96;
  c.block_size = 32;
  c.n_layer = 3;
  c.n_head = 2;
  c.n_embd = 32;
  nn::GPT plain = nn::gpt_create(c), off = nn::gpt_create(c), zero = nn::gpt_create(c);
  nn::gpt_init(plain, 77);
  nn::gpt_init(off, 77, nn::InitOptions{});  // the default: today's initialisation, bit for bit
  CHECK(std::equal(plain.store.values.floats(), plain.store.values.floats() + plain.store.total,
                   off.store.values.floats()));
  nn::InitOptions zero_proj;
  zero_proj.zero_residual_proj = true;
  nn::gpt_init(zero, 77, zero_proj);
  int projections = 0;
  for (const nn::ParamInfo& p : zero.store.table) {
    INFO(p.name);
    const float* z = zero.store.values.floats() + p.offset;
    const float* d = plain.store.values.floats() + p.offset;
    const bool residual = p.role == nn::ParamRole::AttnProjWeight || p.role == nn::ParamRole::MlpDownWeight;
    if (residual) {
      ++projections;
      CHECK(std::all_of(z, z + p.numel, [](float v) { return v == 0.0f; }));
      CHECK(std::any_of(d, d + p.numel, [](float v) { return v != 0.0f; }));
    } else {
      CHECK(std::equal(z, z + p.numel, d));
    }
  }
  CHECK(projections == 2 * c.n_layer);
}
