// nn/: the GPT itself, on top of autograd/ (tensors, arena, tape, ops).
//   config.h    GPTConfig, the hyper-parameters, and their checks
//   params.h    the parameter table: every tensor's nanoGPT name, shape and
//               role, laid out in four flat buffers; the model's shape is
//               spelled out there and only there
//   gpt.h       (this file) the GPT: views bound from the table, GPT-2
//               initialisation by role, the forward pass (taped for
//               training, untaped for inference, or untaped with a KV
//               cache for decoding: one spelling of the model) and the
//               memory plan of one training step
//   kv_cache.h  the keys and values a cached forward keeps between calls
//   decode.h    the sampler's driver of the cached forward: a prompt in one
//               pass, then one token a call, and the context shift
//   sampling.h  temperature, top-k and top-p sampling from logits
// Functions are named noun_verb (gpt_create, gpt_init, gpt_forward).
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/buffer.h"
#include "autograd/ops.h"
#include "autograd/planner.h"
#include "autograd/base/rng.h"
#include "nn/config.h"
#include "nn/kv_cache.h"
#include "nn/params.h"

namespace nn {

using autograd::Tensor;

struct BlockWeights {
  Tensor ln_1_weight, ln_1_bias;
  Tensor c_attn_weight, c_attn_bias;        // [3C, C]: rows q…, k…, v…
  Tensor attn_proj_weight, attn_proj_bias;  // attn.c_proj [C, C]
  Tensor ln_2_weight, ln_2_bias;
  Tensor c_fc_weight, c_fc_bias;            // [4C, C]; [2·4C, C] for SwiGLU (Note [SwiGLU rows])
  Tensor mlp_proj_weight, mlp_proj_bias;    // mlp.c_proj [C, 4C]
};

struct GPT {
  GPTConfig config;
  ParameterStore store;
  autograd::FloatBuffer sinusoid;  // [block_size, C], only for sinusoidal positions
  Tensor wte;                      // [V, C]
  Tensor wpe;                      // [block_size, C]: learned, or the fixed table (no grad); undefined for RoPE
  std::vector<BlockWeights> blocks;
  Tensor ln_f_weight, ln_f_bias;
  Tensor lm_head;                  // [V, C]: wte itself when tied

  int64_t num_parameters() const { return store.num_parameters(); }  // no padding
};

// A model with all parameters zero (load a checkpoint or call gpt_init).
// The config must already be valid (config_error(config) == "").
GPT gpt_create(const GPTConfig& config);
// The same over an existing store (a loaded checkpoint's), which must come
// from parameter_store_create(config) with its training buffers: no second
// set of buffers is allocated.
GPT gpt_create(const GPTConfig& config, ParameterStore store);
// Points each view at its table entry (by role and layer); call again after
// `model.store` was replaced (e.g. loaded).
void gpt_bind_views(GPT& model);

// Choices of the initialisation that are not part of the model's shape (a
// checkpoint's /config does not record them; the training flags do).
struct InitOptions {
  // attn.c_proj and mlp.c_proj weights start at zero (modded-nanoGPT's
  // recipe): each block begins as the identity on the residual stream, and
  // the gradient reaches the projections through the input they multiply.
  bool zero_residual_proj = false;
};

// GPT-2 initialisation, by role: normal(0, 0.02) for matrices and
// embeddings, the two residual projections of each block scaled by
// 1/√(2·n_layer) (zero with options.zero_residual_proj), zero biases,
// LayerNorm weights 1. Deterministic for a seed, whatever the thread count;
// every tensor's values depend on the seed and its place in the table only,
// so zeroing the projections leaves every other tensor as it was.
void gpt_init(GPT& model, uint64_t seed, const InitOptions& options = {});

// logits[B,T,V] for ids[B,T] (T ≤ block_size). ctx carries the run's
// precision, the store's (run_precision(model.store)), which the ops read
// (Note [Run precision]). With a tape in ctx every op is
// recorded and dropout (if configured) acts where nanoGPT's does — after the
// embeddings, on the attention probabilities, on both residual branches —
// with seeds drawn from dropout_seed; without one this is plain inference.
// The model says what to compute, one op a line; where each activation and
// gradient lives is the tape's (Note [Tape modes] in autograd/tape.h), and
// each block's entries are marked for the tape (autograd::BlockMark).
// Taped, hand the logits to cross_entropy, which takes them over.
// attention_probs, if not null, receives every layer's attention
// probabilities [n_layer, B, n_head, T, T] (tapegpt attention).
Tensor gpt_forward(const autograd::OpContext& ctx, const GPT& model, const int32_t* ids, int64_t B,
                   int64_t T, uint64_t dropout_seed = 0, float* attention_probs = nullptr);
// The same forward with a KV cache (Note [KV-cache forward] in gpt.cpp):
// inference only (ctx has no tape), one sequence. ids[1,T] are positions
// cache.length()…cache.length()+T-1 (at most block_size in all); attention
// reads the cached keys and values and appends these T positions'. Returns
// their logits [1,T,V] (those of the last predict the next token), or with
// Logits::LastRow only the last row's [1,1,V]: what a sampler reads (the
// output matmul is often a pass's largest: GPT-2's 50257 rows); the cache
// then holds T more positions.
enum class Logits { AllRows, LastRow };
Tensor gpt_forward(const autograd::OpContext& ctx, const GPT& model, const int32_t* ids, int64_t T,
                   KvCache& cache, Logits rows = Logits::AllRows);

// One training micro-batch's loss: gpt_forward, then the mean cross-entropy
// against targets[B,T]: what a taped step records.
Tensor gpt_loss(const autograd::OpContext& ctx, const GPT& model, const int32_t* ids,
                const int32_t* targets, int64_t B, int64_t T, uint64_t dropout_seed);

// Records one taped gpt_loss of B×T tokens on `tape` in a planning pass
// (Note [Tape modes]): the graph, with no kernel run, in the precision of
// the model's store (in another precision the ops keep other buffers).
void gpt_record_step(autograd::Tape& tape, const GPT& model, int64_t B, int64_t T);

// The memory plan of one taped gpt_loss of B×T tokens (autograd/planner.h),
// from a planning pass in which no kernel runs: its total_floats is the
// arena a training step needs.
autograd::MemoryPlan gpt_training_plan(const GPT& model, int64_t B, int64_t T);

}  // namespace nn
