// GPT views and forward pass (see gpt.h).
#include "nn/gpt.h"

#include <algorithm>
#include <cmath>

#include "autograd/base/check.h"

namespace nn {

using autograd::OpContext;

namespace {

Tensor view_of(ParameterStore& store, const ParamInfo& p) {
  Tensor t;
  t.data = store.params.data() + p.offset;
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
  TG_CHECK(!store.table.empty() && store.params.size() >= store.total && store.grads.size() >= store.total);
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

// The widths of the two layers wider than C, as the table gives them.
struct Widths {
  int64_t qkv, hidden;
};
Widths widths_of(const GPTConfig& c) {
  const ParamLayout layout = param_layout(c);
  return {layout.first(ParamRole::QkvWeight).shape[0],
          layout.first(ParamRole::MlpUpWeight).shape[0]};
}

// Note [GPT gradient buffers]: the taped forward places every activation's
// gradient (Note [Gradient liveness] in autograd/ops.h) in one of four
// shared buffers, so the gradients take the same memory for 1 layer or 48.
// The residual stream alternates between two buffers of N·C floats: each
// residual tensor takes the one its input's gradient is not in (add's
// backward reads the new one's gradient and writes the old one's), and its
// consumers (a block's LayerNorm and add) are recorded before the tensor two
// steps on is made. Each branch — LayerNorm, linear, attention or GELU,
// linear, dropout — is a chain in which every tensor has one consumer, the
// next op, so it alternates between two buffers wide enough for any of its
// tensors (N·max(C, 3C, 4C) floats); a branch starts in the first, which
// the previous branch (ended by its add) no longer needs. The logits'
// gradient lies over the logits (cross_entropy takes them over).
//
// Note [GPT scratch activations]: five outputs per block need their data
// only in the forward (Note [Scratch activations] in autograd/ops.h): each
// branch's last linear and dropout outputs, which only the add reads; and
// the two LayerNorm outputs and the GELU output, which only the next linear
// reads, in forward and, recomputed from their inputs just before that
// linear's backward, in backward (so are the final LayerNorm's). They take
// turns in two scratch buffers, `wide` (N·max(C, 4C)) and `narrow` (N·C):
// ln_1 → narrow, c_proj → wide, dropout → narrow on the attention branch;
// ln_2 → narrow, GELU → wide, c_proj → narrow, dropout → wide on the MLP
// branch; each output is written only once the one before it in the same
// buffer has been read by its consumer's forward, and in backward each
// buffer holds only what a recomputation wrote just before its reader.
struct StepBuffers {
  float* residual[2] = {nullptr, nullptr};
  float* branch[2] = {nullptr, nullptr};
  float* wide = nullptr;
  float* narrow = nullptr;
};

StepBuffers step_buffers(const OpContext& ctx, const GPT& m, int64_t N) {
  StepBuffers g;
  if (!ctx.tape) return g;  // inference: no gradients, every output its own data
  // The widths as widths_of gives them, read off the bound views: a step
  // allocates nothing on the heap.
  const int64_t C = m.config.n_embd;
  int64_t widest = C, hidden = C;
  for (const BlockWeights& b : m.blocks) {
    widest = std::max({widest, b.c_attn_weight.size(0), b.c_fc_weight.size(0)});
    hidden = std::max(hidden, b.c_fc_weight.size(0));
  }
  for (float*& r : g.residual) r = ctx.arena->alloc_zeroed(N * C);
  for (float*& b : g.branch) b = ctx.arena->alloc_zeroed(N * widest);
  g.wide = ctx.arena->alloc(N * std::max(C, hidden));
  g.narrow = ctx.arena->alloc(N * C);
  return g;
}

// ctx with the output's gradient in whichever of `pair` the input's is not.
OpContext after(const OpContext& ctx, float* const (&pair)[2], const Tensor& input) {
  if (!ctx.tape) return ctx;
  return ctx.with_grad(autograd::GradPlacement::shared(input.grad == pair[0] ? pair[1] : pair[0]));
}

}  // namespace

int64_t training_arena_floats(const GPTConfig& c, int64_t B) {
  const int64_t T = c.block_size, C = c.n_embd, L = c.n_layer, NH = c.n_head, V = c.vocab_size;
  const int64_t N = B * T;
  const Widths w = widths_of(c);
  // Every arena allocation is rounded up to 16 floats (64 bytes).
  auto a = [](int64_t n) { return (n + 15) / 16 * 16; };
  // The activations' data; their gradients live in the shared buffers
  // (Note [GPT gradient buffers]), and each block's LayerNorm, c_proj,
  // dropout and GELU outputs in two scratch buffers (Note [GPT scratch
  // activations]). A LayerNorm's mean and 1/std take 2·a(N), and its
  // recomputation's as many again.
  const int64_t per_layer =
      4 * a(N) +                          // ln_1: mean, rstd; recomputed
      a(N * w.qkv) +                      // qkv
      a(N * C) + a(B * NH * T) +          // attention out; each row's log-sum-exp
      a(N * C) +                          // residual add
      4 * a(N) +                          // ln_2
      a(N * w.hidden) +                   // c_fc
      a(N * C);                           // residual add
  const int64_t gradients = 2 * a(N * C) + 2 * a(N * std::max({C, w.qkv, w.hidden}));
  const int64_t scratch = a(N * std::max(C, w.hidden)) + a(N * C);
  return gradients + scratch +
         a(N * C) + (c.dropout > 0 ? a(N * C) : 0) +  // embedding (+ dropout)
         L * per_layer +
         4 * a(N) +                       // ln_f
         a(N * V) +                       // logits: probabilities, then their gradient, in place
         a(N) + 2 * a(1);                 // per-row losses, the mean loss and its grad
}

Tensor gpt_forward(const OpContext& ctx, const GPT& m, const int32_t* ids, int64_t B, int64_t T,
                   uint64_t dropout_seed, float* attention_probs) {
  const GPTConfig& c = m.config;
  TG_CHECK(T >= 1 && T <= c.block_size);
  const float p = c.dropout;
  uint64_t site = dropout_seed;  // each dropout site draws its own seed
  auto next_seed = [&site]() { return tg::splitmix64(site); };
  // Attention dropout seeds come from a stream of their own, so the residual
  // and embedding sites keep the seeds they had before it existed.
  uint64_t attn_site = dropout_seed ^ 0x617474656e74696fULL;  // "attentio"

  // Where each output's gradient goes: Note [GPT gradient buffers]; where
  // some outputs' data goes: Note [GPT scratch activations].
  const StepBuffers g = step_buffers(ctx, m, B * T);
  auto residual = [&](const Tensor& input) { return after(ctx, g.residual, input); };
  auto branch = [&](const Tensor& input) { return after(ctx, g.branch, input); };

  Tensor x = autograd::embedding(residual(Tensor{}), ids, B, T, m.wte, m.wpe);
  x = autograd::dropout(residual(x), x, p, next_seed());
  for (const BlockWeights& b : m.blocks) {
    // x = x + attn(ln_1(x))
    Tensor h = autograd::layernorm(branch(x).with_data(g.narrow), x, b.ln_1_weight, b.ln_1_bias);
    Tensor qkv = autograd::linear(branch(h), h, b.c_attn_weight, b.c_attn_bias);
    autograd::layernorm_recompute(ctx, h, x, b.ln_1_weight, b.ln_1_bias);
    float* probs = attention_probs ? attention_probs + (&b - m.blocks.data()) * B * c.n_head * T * T
                                   : nullptr;
    Tensor a =
        autograd::attention(branch(qkv), qkv, c.n_head, p, tg::splitmix64(attn_site), probs);
    a = autograd::linear(branch(a).with_data(g.wide), a, b.attn_proj_weight, b.attn_proj_bias);
    a = autograd::dropout(branch(a).with_data(g.narrow), a, p, next_seed());
    x = autograd::add(residual(x), x, a);
    // x = x + mlp(ln_2(x)), mlp = c_proj(gelu(c_fc(·)))
    h = autograd::layernorm(branch(x).with_data(g.narrow), x, b.ln_2_weight, b.ln_2_bias);
    const Tensor up = autograd::linear(branch(h), h, b.c_fc_weight, b.c_fc_bias);
    autograd::layernorm_recompute(ctx, h, x, b.ln_2_weight, b.ln_2_bias);
    const Tensor act = autograd::gelu(branch(up).with_data(g.wide), up, c.gelu);
    h = autograd::linear(branch(act).with_data(g.narrow), act, b.mlp_proj_weight,
                         b.mlp_proj_bias);
    autograd::gelu_recompute(ctx, act, up, c.gelu);  // for c_proj's backward
    h = autograd::dropout(branch(h).with_data(g.wide), h, p, next_seed());
    x = autograd::add(residual(x), x, h);
  }
  const Tensor last = autograd::layernorm(branch(x).with_data(g.narrow), x, m.ln_f_weight,
                                          m.ln_f_bias);
  Tensor logits = autograd::linear(ctx.with_grad(autograd::GradPlacement::over_data()), last,
                                   m.lm_head, Tensor{});
  autograd::layernorm_recompute(ctx, last, x, m.ln_f_weight, m.ln_f_bias);
  return logits;
}

}  // namespace nn
