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
  run_op(ctx, AttentionRecord{out.data, lse, probs, qkv.grad, out.grad, qkv.data, B, T, C, NH, p, seed},
         record, out, {{&qkv}, /*backward reads qkv*/ 0b1, /*and its output*/ true});
  return out;
}

}  // namespace autograd
