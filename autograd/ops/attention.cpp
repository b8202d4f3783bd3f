// The causal self-attention op, on the blockwise kernel (Note [Flash
// attention]): the forward saves each row's log-sum-exp and the backward
// recomputes the probabilities from it. The naive T×T kernels are not an op:
// tests and `tapegpt bench --naive-attention` call them directly.
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [attention].
#include "autograd/kernels/attention_flash.h"
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct AttentionRecord {
  static constexpr const char* kName = "attention";
  float* dqkv;
  const float* dout;
  const float* out;  // the forward output, never modified in place
  const float* qkv;
  const float* lse;  // [B,NH,T], saved by the forward
  int64_t B, T, C, NH;
  float dropout_p;
  uint64_t seed;

  void backward(Arena&) const {
    kernels::attention_flash_backward(dqkv, dout, out, qkv, lse, B, T, C, NH, dropout_p, seed);
  }
};

}  // namespace

Tensor attention(const OpContext& ctx, const Tensor& qkv, int64_t n_head, float dropout_p,
                 uint64_t seed, float* probs) {
  TG_CHECK(qkv.ndim == 3 && qkv.size(2) % 3 == 0);
  const int64_t B = qkv.size(0), T = qkv.size(1), C = qkv.size(2) / 3, NH = n_head;
  TG_CHECK(C % NH == 0);
  const bool record = ctx.tape && any_needs_grad(qkv);
  TG_CHECK(!record || !ctx.data);  // backward reads the output: not scratch
  // Dropout only while training (a tape), as the dropout op.
  const float p = ctx.tape ? dropout_p : 0.0f;
  Tensor out = new_output(ctx, qkv, C, record);
  float* lse = ctx.arena->alloc(B * NH * T);
  kernels::attention_flash_forward(out.data, lse, qkv.data, B, T, C, NH, p, seed);
  if (probs) kernels::attention_flash_probs(probs, qkv.data, lse, B, T, C, NH);
  if (record)
    record_op(ctx,
              AttentionRecord{qkv.grad, out.grad, out.data, qkv.data, lse, B, T, C, NH, p, seed},
              out);
  return out;
}

}  // namespace autograd
