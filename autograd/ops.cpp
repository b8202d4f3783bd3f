// Differentiable ops: forward kernel + tape record (see ops.h).
#include "autograd/ops.h"

#include <algorithm>

#include "autograd/kernels/attention_flash.h"
#include "autograd/kernels/kernels.h"

namespace autograd {

namespace {

bool any_needs_grad(const Tensor& a, const Tensor& b = Tensor{}, const Tensor& c = Tensor{}) {
  return a.needs_grad() || b.needs_grad() || c.needs_grad();
}

// A fresh output with `like`'s leading shape and last dimension `last`. Its
// gradient buffer (zeroed, for accumulation) exists only when it will be
// recorded on the tape.
Tensor new_output(OpContext& ctx, const Tensor& like, int64_t last, bool record) {
  Tensor out = like;
  out.shape[out.ndim - 1] = last;
  const int64_t n = out.numel();
  out.data = ctx.arena->alloc(n);
  out.grad = record ? ctx.arena->alloc_zeroed(n) : nullptr;
  return out;
}

int64_t rows(const Tensor& t) { return t.numel() / t.shape[t.ndim - 1]; }

}  // namespace

Tensor embedding(OpContext& ctx, const int32_t* ids, int64_t B, int64_t T, const Tensor& wte,
                 const Tensor& wpe) {
  const int64_t C = wte.size(1);
  TG_CHECK(wpe.size(1) == C && T <= wpe.size(0));
  const bool record = ctx.tape && any_needs_grad(wte, wpe);
  Tensor like = tensor_view(nullptr, nullptr, {B, T, C});
  Tensor out = new_output(ctx, like, C, record);
  kernels::embedding_forward(out.data, ids, wte.data, wpe.data, B, T, C);
  if (record) {
    TapeEntry e;
    e.kind = OpKind::Embedding;
    e.out = out;
    e.in[0] = wte;
    e.in[1] = wpe;
    e.ids = ids;
    e.n[0] = B; e.n[1] = T; e.n[2] = C;
    ctx.tape->record(e);
  }
  return out;
}

Tensor add(OpContext& ctx, const Tensor& a, const Tensor& b) {
  TG_CHECK(a.numel() == b.numel());
  const bool record = ctx.tape && any_needs_grad(a, b);
  Tensor out = new_output(ctx, a, a.shape[a.ndim - 1], record);
  kernels::add_forward(out.data, a.data, b.data, a.numel());
  if (record) {
    TapeEntry e;
    e.kind = OpKind::Add;
    e.out = out;
    e.in[0] = a;
    e.in[1] = b;
    e.n[0] = a.numel();
    ctx.tape->record(e);
  }
  return out;
}

Tensor linear(OpContext& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const int64_t IC = x.shape[x.ndim - 1], OC = weight.size(0), N = rows(x);
  TG_CHECK(weight.size(1) == IC);
  TG_CHECK(!bias.defined() || bias.numel() == OC);
  const bool record = ctx.tape && any_needs_grad(x, weight, bias);
  Tensor out = new_output(ctx, x, OC, record);
  kernels::linear_forward(out.data, x.data, weight.data, bias.data, N, IC, OC);
  if (record) {
    TapeEntry e;
    e.kind = OpKind::Linear;
    e.out = out;
    e.in[0] = x;
    e.in[1] = weight;
    e.in[2] = bias;
    e.n[0] = N; e.n[1] = IC; e.n[2] = OC;
    ctx.tape->record(e);
  }
  return out;
}

Tensor layernorm(OpContext& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const int64_t C = x.shape[x.ndim - 1], N = rows(x);
  TG_CHECK(weight.numel() == C && (!bias.defined() || bias.numel() == C));
  const bool record = ctx.tape && any_needs_grad(x, weight, bias);
  Tensor out = new_output(ctx, x, C, record);
  float* mean = ctx.arena->alloc(N);
  float* rstd = ctx.arena->alloc(N);
  kernels::layernorm_forward(out.data, mean, rstd, x.data, weight.data, bias.data, N, C);
  if (record) {
    TapeEntry e;
    e.kind = OpKind::LayerNorm;
    e.out = out;
    e.in[0] = x;
    e.in[1] = weight;
    e.in[2] = bias;
    e.saved[0] = mean;
    e.saved[1] = rstd;
    e.n[0] = N; e.n[1] = C;
    ctx.tape->record(e);
  }
  return out;
}

Tensor gelu(OpContext& ctx, const Tensor& x, kernels::GeluKind kind) {
  const bool record = ctx.tape && x.needs_grad();
  Tensor out = new_output(ctx, x, x.shape[x.ndim - 1], record);
  kernels::gelu_forward(out.data, x.data, x.numel(), kind);
  if (record) {
    TapeEntry e;
    e.kind = OpKind::Gelu;
    e.out = out;
    e.in[0] = x;
    e.n[0] = x.numel();
    e.n[1] = static_cast<int64_t>(kind);
    ctx.tape->record(e);
  }
  return out;
}

Tensor attention(OpContext& ctx, const Tensor& qkv, int64_t n_head, float dropout_p,
                 uint64_t seed, float* probs) {
  TG_CHECK(qkv.ndim == 3 && qkv.size(2) % 3 == 0);
  const int64_t B = qkv.size(0), T = qkv.size(1), C = qkv.size(2) / 3, NH = n_head;
  TG_CHECK(C % NH == 0);
  const bool record = ctx.tape && qkv.needs_grad();
  // Dropout only while training (a tape), as the dropout op.
  const float p = ctx.tape ? dropout_p : 0.0f;
  Tensor out = new_output(ctx, qkv, C, record);
  float* saved;
  if (ctx.naive_attention) {
    saved = ctx.arena->alloc(B * NH * T * T);  // probabilities
    kernels::attention_forward(out.data, saved, qkv.data, B, T, C, NH, p, seed);
    if (probs) std::copy_n(saved, B * NH * T * T, probs);
  } else {
    saved = ctx.arena->alloc(B * NH * T);  // each row's log-sum-exp
    kernels::attention_flash_forward(out.data, saved, qkv.data, B, T, C, NH, p, seed);
    if (probs) kernels::attention_flash_probs(probs, qkv.data, saved, B, T, C, NH);
  }
  if (record) {
    TapeEntry e;
    e.kind = ctx.naive_attention ? OpKind::AttentionNaive : OpKind::Attention;
    e.out = out;
    e.in[0] = qkv;
    e.saved[0] = saved;
    e.n[0] = B; e.n[1] = T; e.n[2] = C; e.n[3] = NH;
    e.p = p;
    e.seed = seed;
    ctx.tape->record(e);
  }
  return out;
}

Tensor dropout(OpContext& ctx, const Tensor& x, float p, uint64_t seed) {
  if (!ctx.tape || p <= 0.0f) return x;
  const bool record = x.needs_grad();
  Tensor out = new_output(ctx, x, x.shape[x.ndim - 1], record);
  kernels::dropout_forward(out.data, x.data, p, seed, x.numel());
  if (record) {
    TapeEntry e;
    e.kind = OpKind::Dropout;
    e.out = out;
    e.in[0] = x;
    e.p = p;
    e.seed = seed;
    e.n[0] = x.numel();
    ctx.tape->record(e);
  }
  return out;
}

Tensor cross_entropy(OpContext& ctx, const Tensor& logits, const int32_t* targets,
                     float* losses) {
  const int64_t V = logits.shape[logits.ndim - 1], N = rows(logits);
  const bool record = ctx.tape && logits.needs_grad();
  if (!losses) losses = ctx.arena->alloc(N);
  kernels::crossentropy_forward(losses, logits.data, logits.data, targets, N, V);
  // The mean in double, rows in order: deterministic and exact enough.
  double sum = 0.0;
  for (int64_t n = 0; n < N; ++n) sum += losses[n];
  Tensor out = tensor_view(ctx.arena->alloc(1), record ? ctx.arena->alloc_zeroed(1) : nullptr, {1});
  out.data[0] = static_cast<float>(sum / static_cast<double>(N));
  if (record) {
    TapeEntry e;
    e.kind = OpKind::CrossEntropy;
    e.out = out;
    e.in[0] = logits;
    e.saved[0] = logits.data;  // now holds the probabilities
    e.ids = targets;
    e.n[0] = N; e.n[1] = V;
    ctx.tape->record(e);
  }
  return out;
}

}  // namespace autograd
