// Differentiable ops: each runs its forward kernel and, when a tape is given
// and some input needs a gradient, records a TapeEntry for backward. This is
// the only code that knows both the kernels and the tape.
//
// Training passes a tape; inference passes none and runs the same kernels
// (Note [No hidden modes]): there is no global no-grad switch. Dropout acts
// only when a tape is present.
#pragma once

#include <cstdint>

#include "autograd/arena.h"
#include "autograd/kernels/kernels.h"
#include "autograd/tape.h"
#include "autograd/tensor.h"

namespace autograd {

struct OpContext {
  Arena* arena = nullptr;  // where outputs, gradients and saved buffers live
  Tape* tape = nullptr;    // null: inference, nothing is recorded
  // Attention runs the blockwise kernel (memory linear in T); true selects
  // the naive one that stores every T×T probability map (benchmarks only).
  bool naive_attention = false;
};

// ids[B,T] → [B,T,C]: wte[V,C] rows plus wpe[T',C] rows 0…T-1 (T ≤ T').
Tensor embedding(OpContext& ctx, const int32_t* ids, int64_t B, int64_t T, const Tensor& wte,
                 const Tensor& wpe);
Tensor add(OpContext& ctx, const Tensor& a, const Tensor& b);
// x[…, IC] · weight[OC, IC]ᵀ + bias[OC]; bias may be an undefined Tensor.
Tensor linear(OpContext& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias);
Tensor layernorm(OpContext& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias);
Tensor gelu(OpContext& ctx, const Tensor& x, kernels::GeluKind kind = kernels::GeluKind::Tanh);
// qkv[B,T,3C] → [B,T,C]. With a tape and dropout_p > 0 the attention
// probabilities are dropped (Note [Attention dropout]) with this seed. If
// probs is not null it receives the attention probabilities [B,NH,T,T] the
// forward used (rows = queries, exactly 0 above the diagonal), for looking
// at; only inference (no tape, so no dropout) asks for them.
Tensor attention(OpContext& ctx, const Tensor& qkv, int64_t n_head, float dropout_p = 0.0f,
                 uint64_t seed = 0, float* probs = nullptr);
// Identity without a tape or when p == 0.
Tensor dropout(OpContext& ctx, const Tensor& x, float p, uint64_t seed);
// logits[N,V] (any leading shape) → [1], the mean of -log softmax(logits)[target].
// If losses is not null it receives the N per-row losses.
// The probabilities overwrite the logits (they are not needed afterwards).
Tensor cross_entropy(OpContext& ctx, const Tensor& logits, const int32_t* targets,
                     float* losses = nullptr);

}  // namespace autograd
