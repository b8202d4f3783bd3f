// GPT views and forward pass (see gpt.h).
#include "nn/gpt.h"

#include <algorithm>
#include <cmath>

#include "autograd/base/check.h"
#include "autograd/planner.h"

namespace nn {

using autograd::OpContext;

namespace {

// Its place in the store, split or not (Note [Run precision]).
Tensor view_of(ParameterStore& store, const ParamInfo& p) {
  Tensor t;
  t.data = store.values.place(p.offset);
  t.grad = store.grads.data() + p.offset;
  for (int64_t d : p.shape) t.shape[t.ndim++] = d;
  return t;
}

// The view a table entry fills.
Tensor& slot_of(GPT& m, const ParamInfo& p) {
  using R = ParamRole;
  if (p.layer >= 0) {
    BlockWeights& b = m.blocks[static_cast<size_t>(p.layer)];
    switch (p.role) {
      case R::AttnNormWeight: return b.ln_1_weight;
      case R::AttnNormBias: return b.ln_1_bias;
      case R::QkvWeight: return b.c_attn_weight;
      case R::QkvBias: return b.c_attn_bias;
      case R::AttnProjWeight: return b.attn_proj_weight;
      case R::AttnProjBias: return b.attn_proj_bias;
      case R::MlpNormWeight: return b.ln_2_weight;
      case R::MlpNormBias: return b.ln_2_bias;
      case R::MlpUpWeight: return b.c_fc_weight;
      case R::MlpUpBias: return b.c_fc_bias;
      case R::MlpDownWeight: return b.mlp_proj_weight;
      case R::MlpDownBias: return b.mlp_proj_bias;
      default: break;
    }
  } else {
    switch (p.role) {
      case R::TokenEmbedding: return m.wte;
      case R::PositionEmbedding: return m.wpe;
      case R::FinalNormWeight: return m.ln_f_weight;
      case R::FinalNormBias: return m.ln_f_bias;
      case R::OutputHead: return m.lm_head;
      default: break;
    }
  }
  TG_CHECK(false && "a block role outside a block, or the reverse");
  return m.wte;
}

void fill_sinusoid(float* table, int64_t T, int64_t C) {
  // PE[t, 2i] = sin(t / 10000^(2i/C)), PE[t, 2i+1] = cos(t / 10000^(2i/C)).
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < C / 2; ++i) {
      const double angle = static_cast<double>(t) / std::pow(10000.0, 2.0 * i / C);
      table[t * C + 2 * i] = static_cast<float>(std::sin(angle));
      table[t * C + 2 * i + 1] = static_cast<float>(std::cos(angle));
    }
}

}  // namespace

void gpt_bind_views(GPT& m) {
  const GPTConfig& c = m.config;
  // Fresh views: a tensor absent from the table (a bias when config.bias is
  // false) stays undefined.
  m.blocks.assign(static_cast<size_t>(c.n_layer), BlockWeights{});
  m.wte = m.wpe = m.ln_f_weight = m.ln_f_bias = m.lm_head = Tensor{};
  for (const ParamInfo& p : m.store.table) slot_of(m, p) = view_of(m.store, p);
  if (c.pos_encoding == PosEncoding::Sinusoidal)
    m.wpe = autograd::tensor_view(m.sinusoid.data(), nullptr, {c.block_size, c.n_embd});
  if (c.tied) m.lm_head = m.wte;
}

GPT gpt_create(const GPTConfig& config) { return gpt_create(config, parameter_store_create(config)); }

GPT gpt_create(const GPTConfig& config, ParameterStore store) {
  TG_CHECK(config_error(config).empty());
  TG_CHECK(!store.table.empty() && store.values.size() >= store.total && store.grads.size() >= store.total);
  GPT m;
  m.config = config;
  m.store = std::move(store);
  if (config.pos_encoding == PosEncoding::Sinusoidal) {
    m.sinusoid.resize(config.block_size * config.n_embd);
    fill_sinusoid(m.sinusoid.data(), config.block_size, config.n_embd);
  }
  gpt_bind_views(m);
  return m;
}

namespace {

// The norm and the MLP activation the config picks (Note [Model choices] in
// config.h).
Tensor norm(const OpContext& ctx, const GPTConfig& c, const Tensor& x, const Tensor& weight,
            const Tensor& bias) {
  if (c.norm == NormKind::RMSNorm) return autograd::rmsnorm(ctx, x, weight);
  return autograd::layernorm(ctx, x, weight, bias);
}

Tensor activation(const OpContext& ctx, const GPTConfig& c, const Tensor& x) {
  switch (c.mlp) {
    case MlpKind::Relu2: return autograd::relu2(ctx, x);
    case MlpKind::Swiglu: return autograd::swiglu(ctx, x);
    case MlpKind::Gelu: break;
  }
  return autograd::gelu(ctx, x, c.gelu);
}

}  // namespace

// Note [KV-cache forward]
// Decoding runs the forward below, the one training runs, with a KV cache
// (nanochat's GPT.forward(idx, kv_cache), llama.cpp's graph builders): the
// new tokens come with their start position pos0, the number of positions
// cached. The embedding adds position rows pos0…, RoPE rotates q and k by
// pos0…, and attention's cached mode appends each layer's new k and v to
// the cache and lets every new query attend over positions 0 to its own.
// Every other op works row by row and does not know. A prompt is then read
// in one pass (T rows through every matmul at once) and each generated
// token in a pass of one row; nothing under nn/ calls the block's kernels
// itself.
// Bits: a pass from position 0 (a prompt, a context shift's re-encoding)
// runs the uncached forward's kernels on the same rows and gives its bits;
// a one-row pass gives those of the one-token decoder this replaced (sgemv,
// attention_decode). They differ from each other by float32 rounding: the
// matmuls of T > 1 rows (sgemm) and of one row sum in other orders, as do
// the blockwise attention and the one-query kernel (tests/nn/
// test_decode.cpp bounds it; bf16's oneDNN matmuls differ more, at bf16's
// precision). Rows after position 0 in a pass of several use
// attention_decode per row (kernels::attention_decode_rows).

namespace {

Tensor forward(const OpContext& ctx, const GPT& m, const int32_t* ids, int64_t B, int64_t T,
               uint64_t dropout_seed, float* attention_probs, KvCache* cache, Logits rows) {
  const GPTConfig& c = m.config;
  const int64_t pos0 = cache ? cache->length() : 0;  // the first new token's position
  TG_CHECK(T >= 1 && pos0 + T <= c.block_size);
  TG_CHECK(ctx.precision == run_precision(m.store));  // the run's precision is its store's
  const float p = c.dropout;
  uint64_t site = dropout_seed;  // each dropout site draws its own seed
  auto next_seed = [&site]() { return tg::splitmix64(site); };
  // Attention dropout seeds come from a stream of their own, so the residual
  // and embedding sites keep the seeds they had before it existed.
  uint64_t attn_site = dropout_seed ^ 0x617474656e74696fULL;  // "attentio"
  auto probs_of = [&](int64_t layer) {
    return attention_probs ? attention_probs + layer * B * c.n_head * T * T : nullptr;
  };

  Tensor x = autograd::embedding(ctx, ids, B, T, m.wte, m.wpe, pos0);
  x = autograd::dropout(ctx, x, p, next_seed());
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const BlockWeights& b = m.blocks[static_cast<size_t>(l)];
    {  // x = x + attn(ln_1(x))
      const autograd::BlockMark attention_half(ctx, l, 0);  // Note [Block parts]
      Tensor h = norm(ctx, c, x, b.ln_1_weight, b.ln_1_bias);
      h = autograd::linear(ctx, h, b.c_attn_weight, b.c_attn_bias);
      if (c.pos_encoding == PosEncoding::Rope) h = autograd::rope(ctx, h, c.n_head, pos0);
      if (c.qk_norm) h = autograd::qk_norm(ctx, h, c.n_head);
      h = cache ? autograd::attention(ctx, h, c.n_head, cache->layer(l))
                : autograd::attention(ctx, h, c.n_head, p, tg::splitmix64(attn_site), probs_of(l));
      h = autograd::linear(ctx, h, b.attn_proj_weight, b.attn_proj_bias);
      h = autograd::dropout(ctx, h, p, next_seed());
      x = autograd::add(ctx, x, h);
    }
    {  // x = x + mlp(ln_2(x)), mlp = c_proj(act(c_fc(·)))
      const autograd::BlockMark mlp_half(ctx, l, 1);
      Tensor h = norm(ctx, c, x, b.ln_2_weight, b.ln_2_bias);
      h = autograd::linear(ctx, h, b.c_fc_weight, b.c_fc_bias);
      h = activation(ctx, c, h);
      h = autograd::linear(ctx, h, b.mlp_proj_weight, b.mlp_proj_bias);
      h = autograd::dropout(ctx, h, p, next_seed());
      x = autograd::add(ctx, x, h);
    }
  }
  if (cache) cache->advance(T);
  // Only the last position's logits wanted: the head (norm and output
  // matmul, both row by row) reads the last row alone.
  if (rows == Logits::LastRow && T > 1) x = autograd::tensor_view(x.data + (T - 1) * c.n_embd, nullptr, {1, 1, c.n_embd});
  const autograd::BlockMark head(ctx, -1, 1);
  x = norm(ctx, c, x, m.ln_f_weight, m.ln_f_bias);
  Tensor logits = autograd::linear(ctx, x, m.lm_head, Tensor{});
  if (c.logit_softcap > 0.0f) logits = autograd::softcap(ctx, logits, c.logit_softcap);
  return logits;
}

}  // namespace

Tensor gpt_forward(const OpContext& ctx, const GPT& m, const int32_t* ids, int64_t B, int64_t T,
                   uint64_t dropout_seed, float* attention_probs) {
  return forward(ctx, m, ids, B, T, dropout_seed, attention_probs, nullptr, Logits::AllRows);
}

Tensor gpt_forward(const OpContext& ctx, const GPT& m, const int32_t* ids, int64_t T, KvCache& cache,
                   Logits rows) {
  TG_CHECK(!ctx.tape && "the KV cache is for inference: no tape");
  return forward(ctx, m, ids, 1, T, 0, nullptr, &cache, rows);
}

Tensor gpt_loss(const OpContext& ctx, const GPT& model, const int32_t* ids, const int32_t* targets,
                int64_t B, int64_t T, uint64_t dropout_seed) {
  Tensor logits = gpt_forward(ctx, model, ids, B, T, dropout_seed);
  return autograd::cross_entropy(ctx, std::move(logits), targets);
}

void gpt_record_step(autograd::Tape& tape, const GPT& model, int64_t B, int64_t T) {
  // Note [Tape modes]: no kernel runs, so the tokens are never read.
  autograd::Arena arena;
  tape.begin_planning();
  const int32_t no_tokens[1] = {0};
  gpt_loss(OpContext{&arena, &tape, run_precision(model.store)}, model, no_tokens, no_tokens, B, T, 0);
}

autograd::MemoryPlan gpt_training_plan(const GPT& model, int64_t B, int64_t T) {
  autograd::Tape tape;
  gpt_record_step(tape, model, B, T);
  return autograd::plan_memory(tape);
}

}  // namespace nn
