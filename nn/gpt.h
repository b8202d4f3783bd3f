// The GPT: parameters bound to named tensor views, GPT-2 initialisation, and
// the forward pass (taped for training, untaped for inference — the same
// code and kernels either way).
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/buffer.h"
#include "autograd/ops.h"
#include "autograd/base/rng.h"
#include "nn/config.h"
#include "nn/params.h"

namespace nn {

using autograd::Tensor;

struct BlockWeights {
  Tensor ln_1_weight, ln_1_bias;
  Tensor c_attn_weight, c_attn_bias;        // [3C, C]: rows q…, k…, v…
  Tensor attn_proj_weight, attn_proj_bias;  // attn.c_proj [C, C]
  Tensor ln_2_weight, ln_2_bias;
  Tensor c_fc_weight, c_fc_bias;            // [4C, C]
  Tensor mlp_proj_weight, mlp_proj_bias;    // mlp.c_proj [C, 4C]
};

struct GPT {
  GPTConfig config;
  ParameterStore store;
  autograd::FloatBuffer sinusoid;  // [block_size, C], only for sinusoidal positions
  Tensor wte;                      // [V, C]
  Tensor wpe;                      // [block_size, C]: learned, or the fixed table (no grad)
  std::vector<BlockWeights> blocks;
  Tensor ln_f_weight, ln_f_bias;
  Tensor lm_head;                  // [V, C]: wte itself when tied

  int64_t num_parameters() const;  // exact count (no alignment padding)
};

// A model with all parameters zero (load a checkpoint or call gpt_init).
// The config must already be valid (config_error(config) == "").
GPT make_gpt(const GPTConfig& config);
// The same over an existing store (a loaded checkpoint's), which must come
// from make_parameter_store(config) with its training buffers: no second set
// of buffers is allocated.
GPT make_gpt(const GPTConfig& config, ParameterStore store);
// Re-points the tensor views after `model.store` was replaced (e.g. loaded).
void bind_views(GPT& model);

// GPT-2 initialisation: normal(0, 0.02) for matrices and embeddings, the two
// residual projections of each block scaled by 1/√(2·n_layer), zero biases,
// LayerNorm weights 1. Deterministic for a seed, whatever the thread count.
void gpt_init(GPT& model, uint64_t seed);

// Floats one taped training step of gpt_forward + cross_entropy + backward
// takes from the arena for a batch of B sequences of block_size tokens: the
// activations, their gradients and what backward saves. Used to size the
// arena up front, so even the first step allocates it once.
// naive_attention: the plan for OpContext::naive_attention (T×T maps).
int64_t training_arena_floats(const GPTConfig& config, int64_t B, bool naive_attention = false);

// logits[B,T,V] for ids[B,T] (T ≤ block_size). With a tape in ctx every op is
// recorded and dropout (if configured) acts where nanoGPT's does — after the
// embeddings, on the attention probabilities, on both residual branches —
// with seeds drawn from dropout_seed; without one this is plain inference.
// attention_probs, if not null, receives every layer's attention
// probabilities [n_layer, B, n_head, T, T] (tapegpt attention).
Tensor gpt_forward(autograd::OpContext& ctx, const GPT& model, const int32_t* ids, int64_t B,
                   int64_t T, uint64_t dropout_seed = 0, float* attention_probs = nullptr);

}  // namespace nn
