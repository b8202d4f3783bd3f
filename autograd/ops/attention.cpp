// The causal self-attention op, on the blockwise kernel (Note [Flash
// attention]): the forward saves each row's log-sum-exp and the backward
// recomputes the probabilities from it. The naive T×T kernels are not an op:
// tests and `tapegpt bench --naive-attention` call them directly.
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [attention].
#include <cstring>

#include "autograd/kernels/attention_flash.h"
#include "autograd/kernels/bf16.h"
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct AttentionRecord {
  static constexpr const char* kName = "attention";
  float* out;    // read again by backward: never modified in place
  float* lse;    // [B,NH,T], saved for backward
  float* probs;  // [B,NH,T,T] for looking at (inference only), or null
  float* dqkv;
  const float* dout;
  const float* qkv;
  int64_t B, T, C, NH;
  float dropout_p;
  uint64_t seed;

  void forward() const {
    kernels::attention_flash_forward(out, lse, qkv, B, T, C, NH, dropout_p, seed);
    if (probs) kernels::attention_flash_probs(probs, qkv, lse, B, T, C, NH);
  }
  void backward() const {
    kernels::attention_flash_backward(dqkv, dout, out, qkv, lse, B, T, C, NH, dropout_p, seed);
  }
};

// Note [bf16 attention inputs]
// In a bf16 run q, k and v come out of a linear with bf16 operands, which
// under PyTorch's autocast would hand them on in bf16 (Note [Run precision]).
// Of the three, this op rounds v to bf16 (to nearest, ties to even), as
// autocast's P·v takes it, and keeps q and k float32: the bf16 kernels
// (Note [bf16 attention products]) run on q, k and the rounded v, with the
// scores q·kᵀ in float32 and every other product on bf16 operands; every
// sum is float32, as are softmax, lse and out. What backward keeps is q
// and k in float32 and v in bf16, 5/6 of the
// float32 qkv the plain op keeps (G's planned activations: 141.5 MiB in
// float32, 137.0 in bf16). Rounding q and k too, as autocast's q·kᵀ does,
// keeps half (128.4 MiB), but it put the demo's final validation loss
// +0.021 from float32's, past issue 22's 0.02, where v alone gave +0.005
// (BENCHMARKS-journal.md, Learning in bf16): an error in a score goes through exp,
// one in v is only carried along.
// Both kernels read qkv rebuilt into scratch that lives only while they run.
// The rounding's gradient is taken as the identity (autocast's too): dqkv is
// the bf16 kernels' gradient at the rounded point, exactly
// (tests/autograd/test_attention_bf16_op.cpp).
struct AttentionBf16Record {
  static constexpr const char* kName = "attention_bf16";
  float* out;  // read again by backward: never modified in place
  float* lse;
  float* probs;  // as AttentionRecord's
  float* dqkv;
  const float* dout;
  const float* qkv;    // the float32 input, read by forward only
  float* kept_qk;      // saved: q and k [N,2C] in float32
  uint16_t* kept_v;    // saved: v [N,C] in bf16
  float* wide;         // forward scratch: q, k and the rounded v, [N,3C]
  float* wide_back;    // backward scratch, the same again; null without a tape
  int64_t B, T, C, NH;
  float dropout_p;
  uint64_t seed;

  void forward() const {
    kernels::keep_qkv_v_bf16(kept_qk, kept_v, wide, qkv, B * T, C);
    kernels::attention_flash_forward_bf16(out, lse, wide, B, T, C, NH, dropout_p, seed);
    if (probs) kernels::attention_flash_probs(probs, wide, lse, B, T, C, NH);
  }
  void backward() const {
    if (!dqkv) return;
    kernels::widen_kept_qkv(wide_back, kept_qk, kept_v, B * T, C);
    kernels::attention_flash_backward_bf16(dqkv, dout, out, wide_back, lse, B, T, C, NH, dropout_p, seed);
  }
};

}  // namespace

Tensor attention(const OpContext& ctx, const Tensor& qkv, int64_t n_head, float dropout_p,
                 uint64_t seed, float* probs) {
  TG_CHECK(qkv.ndim == 3 && qkv.size(2) % 3 == 0);
  const int64_t B = qkv.size(0), T = qkv.size(1), C = qkv.size(2) / 3, NH = n_head;
  TG_CHECK(C % NH == 0);
  const bool record = records(ctx, qkv);
  // Dropout only while training (a tape), as the dropout op.
  const float p = ctx.tape ? dropout_p : 0.0f;
  Tensor out = new_output(ctx, qkv, C, record);
  float* lse = new_saved(ctx, B * NH * T, record);
  if (ctx.precision.bf16()) {
    const int64_t N = B * T, n = qkv.numel();
    float* kept_qk = new_saved(ctx, N * 2 * C, record);
    uint16_t* kept_v = as_bf16(new_saved(ctx, floats_for_bf16(N * C), record));
    float* wide = new_scratch(ctx, n, record);
    float* wide_back = record ? new_backward_scratch(ctx, n) : nullptr;
    run_op(ctx,
           AttentionBf16Record{out.data, lse, probs, qkv.grad, out.grad, qkv.data, kept_qk, kept_v, wide, wide_back,
                               B, T, C, NH, p, seed},
           record, out, EntryUses{&qkv}.saves(out));  // and what it kept of qkv
    return out;
  }
  run_op(ctx, AttentionRecord{out.data, lse, probs, qkv.grad, out.grad, qkv.data, B, T, C, NH, p, seed},
         record, out, EntryUses{&qkv}.saves(qkv, out));
  return out;
}

Tensor attention(const OpContext& ctx, const Tensor& qkv, int64_t n_head, const LayerCache& cache) {
  TG_CHECK(!ctx.tape && "the KV cache is for inference: no tape");
  TG_CHECK(qkv.ndim == 3 && qkv.size(0) == 1 && qkv.size(2) % 3 == 0);
  const int64_t T = qkv.size(1), C = qkv.size(2) / 3, NH = n_head, pos0 = cache.pos0;
  TG_CHECK(C % NH == 0 && pos0 >= 0 && pos0 + T <= cache.capacity);
  // Append this call's k and v (RoPE already rotated k) to the cache.
  for (int64_t t = 0; t < T; ++t) {
    const float* row = qkv.data + t * 3 * C;
    std::memcpy(cache.k + (pos0 + t) * C, row + C, static_cast<size_t>(C) * sizeof(float));
    std::memcpy(cache.v + (pos0 + t) * C, row + 2 * C, static_cast<size_t>(C) * sizeof(float));
  }
  // v as the plain op's bf16 record reads it (Note [bf16 attention inputs]).
  if (ctx.precision.bf16()) kernels::round_through_bf16(cache.v + pos0 * C, T * C);
  // A prompt from position 0 sees only itself: the plain op over its rows is
  // the same attention, vectorised, and gives the uncached forward's bits.
  if (pos0 == 0 && T > 1) return attention(ctx, qkv, n_head);
  Tensor out = new_output(ctx, qkv, C, false);
  float* scratch = ctx.arena->alloc(T * NH * (pos0 + T));
  kernels::attention_decode_rows(out.data, scratch, qkv.data, cache.k, cache.v, pos0, T, C, NH, ctx.precision.bf16());
  return out;
}

}  // namespace autograd
