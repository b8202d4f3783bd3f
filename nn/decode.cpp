// Decoder implementation (see decode.h).
#include "nn/decode.h"

#include <algorithm>
#include <cstring>

#include "autograd/kernels/bf16.h"
#include "autograd/kernels/kernels.h"

namespace nn {

namespace {

// out[OC] = W·in + b for one row, W [OC, IC]: the sizes are the weight's.
// With bf16 operands in a bf16 run, as the linear op (Note [bf16 linear]):
// `in` is rounded into in_bf16 first.
void linear_row(const autograd::RunPrecision& precision, float* out, const float* in, const Tensor& w,
                const Tensor& b, uint16_t* in_bf16) {
  if (const uint16_t* w_bf16 = precision.bf16_copy(w))
    kernels::linear_forward_bf16_rounding(out, in, in_bf16, w_bf16, b.data, 1, w.size(1), w.size(0));
  else kernels::linear_forward(out, in, w.data, b.data, 1, w.size(1), w.size(0));
}

// out[C] = norm(x) for one row: LayerNorm (gain and bias) or RMSNorm (gain only).
void norm_row(NormKind kind, float* out, float* mean, float* rstd, const float* x, const Tensor& w,
              const Tensor& b, int64_t C) {
  if (kind == NormKind::RMSNorm) kernels::rmsnorm_forward(out, rstd, x, w.data, 1, C);
  else kernels::layernorm_forward(out, mean, rstd, x, w.data, b.data, 1, C);
}

}  // namespace

Decoder::Decoder(const GPT& model) : model_(model) {
  const GPTConfig& c = model.config;
  const int64_t C = c.n_embd;
  const BlockWeights& b = model.blocks.front();
  k_cache_.resize(c.n_layer * c.block_size * C);
  v_cache_.resize(c.n_layer * c.block_size * C);
  x_.resize(C);
  h_.resize(C);
  qkv_.resize(b.c_attn_weight.size(0));
  att_.resize(C);
  // c_fc's output [up], then the activation [H] when it is not computed in
  // place (ReLU², and SwiGLU, whose [2H] input halves into [H]).
  fc_.resize(b.c_fc_weight.size(0) + b.mlp_proj_weight.size(1));
  logits_.resize(model.lm_head.size(0));
  scratch_.resize(c.n_head * c.block_size);
  mean_rstd_.resize(2);
  row_bf16_.resize(std::max(C, b.mlp_proj_weight.size(1)));  // the widest input a linear reads
  history_.reserve(static_cast<size_t>(c.block_size));
}

const float* Decoder::step(int32_t token) {
  const int64_t T = model_.config.block_size;
  if (len_ == T) {
    // Full: keep the newest half and re-encode it from position 0.
    const int64_t keep = T / 2;
    std::vector<int32_t> recent(history_.end() - keep, history_.end());
    reset();
    for (int32_t t : recent) {
      history_.push_back(t);
      forward_position(t, len_++);
    }
  }
  history_.push_back(token);
  return forward_position(token, len_++);
}

const float* Decoder::forward_position(int32_t token, int64_t pos) {
  const GPTConfig& c = model_.config;
  const int64_t C = c.n_embd, T = c.block_size;
  float* x = x_.data();
  float* h = h_.data();
  float* mean = mean_rstd_.data();
  float* rstd = mean_rstd_.data() + 1;

  const bool rope = c.pos_encoding == PosEncoding::Rope;
  const BlockWeights& b0 = model_.blocks.front();
  const int64_t up = b0.c_fc_weight.size(0), H = b0.mlp_proj_weight.size(1);  // c_fc: H, or 2H for SwiGLU
  float* fc = fc_.data();
  // GELU runs in place over c_fc's output; ReLU² and SwiGLU write beside it.
  float* act = c.mlp == MlpKind::Gelu ? fc : fc + up;

  // RoPE adds nothing to the embedding: it rotates q and k in every block.
  const autograd::RunPrecision precision = run_precision(model_.store);  // Note [Run precision]
  kernels::embedding_forward(x, &token, precision.values(model_.wte), precision.values(model_.wpe).from(pos * C),
                             1, 1, C);
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const BlockWeights& b = model_.blocks[static_cast<size_t>(l)];
    float* k_cache = k_cache_.data() + l * T * C;
    float* v_cache = v_cache_.data() + l * T * C;
    // x = x + c_proj(attention(c_attn(ln_1(x)))) with this position's k, v cached
    norm_row(c.norm, h, mean, rstd, x, b.ln_1_weight, b.ln_1_bias, C);
    linear_row(precision, qkv_.data(), h, b.c_attn_weight, b.c_attn_bias, row_bf16_.data());
    // q and k rotated to this position before k enters the cache (in place).
    if (rope) kernels::rope_forward(qkv_.data(), qkv_.data(), 1, 1, C, c.n_head, pos);
    // v rounded to bf16, as the attention op rounds it (Note [bf16 attention inputs]).
    if (precision.bf16) kernels::round_through_bf16(qkv_.data() + 2 * C, C);
    std::memcpy(k_cache + pos * C, qkv_.data() + C, static_cast<size_t>(C) * sizeof(float));
    std::memcpy(v_cache + pos * C, qkv_.data() + 2 * C, static_cast<size_t>(C) * sizeof(float));
    kernels::attention_decode(att_.data(), scratch_.data(), qkv_.data(), k_cache, v_cache,
                              pos + 1, C, c.n_head);
    linear_row(precision, h, att_.data(), b.attn_proj_weight, b.attn_proj_bias, row_bf16_.data());
    kernels::accumulate(x, h, C);
    // x = x + c_proj(act(c_fc(ln_2(x))))
    norm_row(c.norm, h, mean, rstd, x, b.ln_2_weight, b.ln_2_bias, C);
    linear_row(precision, fc, h, b.c_fc_weight, b.c_fc_bias, row_bf16_.data());
    switch (c.mlp) {
      case MlpKind::Gelu: kernels::gelu_forward(fc, fc, H, c.gelu); break;  // elementwise: in place is safe
      case MlpKind::Relu2: kernels::relu2_forward(act, fc, H); break;
      case MlpKind::Swiglu: kernels::swiglu_forward(act, fc, 1, H); break;  // fc [2H] = [gate | value]
    }
    linear_row(precision, h, act, b.mlp_proj_weight, b.mlp_proj_bias, row_bf16_.data());
    kernels::accumulate(x, h, C);
  }
  norm_row(c.norm, h, mean, rstd, x, model_.ln_f_weight, model_.ln_f_bias, C);
  linear_row(precision, logits_.data(), h, model_.lm_head, Tensor{}, row_bf16_.data());
  return logits_.data();
}

}  // namespace nn
