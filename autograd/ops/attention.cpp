// The causal self-attention op, on the blockwise kernel (Note [Flash
// attention]): the forward saves each row's log-sum-exp and the backward
// recomputes the probabilities from it. The naive T×T kernels are not an op:
// tests and `tapegpt bench --naive-attention` call them directly.
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [attention].
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
// under PyTorch's autocast would hand them on in bf16 (Tensor::autocast_bf16).
// The op does the same: it rounds qkv to bf16 once (to nearest, ties to
// even) and runs the float32 kernels on the rounded values, so q·kᵀ and P·v
// multiply bf16 values (exact in float32) and sum in float32, as autocast's
// two bf16 matmuls do; softmax, lse and out stay float32. What backward keeps
// is the bf16 qkv, half the float32 qkv the plain op keeps (G's planned
// activations: 141.5 MiB in float32, 128.4 in bf16). Both kernels read qkv
// widened into scratch that lives only while they run. The rounding's
// gradient is taken as the identity (autocast's too): dqkv is the float32
// kernel's gradient at the rounded point, exactly
// (tests/autograd/test_attention_bf16_op.cpp).
struct AttentionBf16Record {
  static constexpr const char* kName = "attention_bf16";
  float* out;  // read again by backward: never modified in place
  float* lse;
  float* probs;  // as AttentionRecord's
  float* dqkv;
  const float* dout;
  const float* qkv;         // the float32 input, read by forward only
  uint16_t* qkv_bf16;       // its rounding, saved for backward
  float* qkv_wide;          // forward scratch: qkv_bf16 as float32
  float* qkv_wide_back;     // backward scratch, the same; null without a tape
  int64_t B, T, C, NH;
  float dropout_p;
  uint64_t seed;

  void forward() const {
    const int64_t n = B * T * 3 * C;
    kernels::round_to_bf16(qkv_bf16, qkv, n);
    kernels::widen_bf16(qkv_wide, qkv_bf16, n);
    kernels::attention_flash_forward(out, lse, qkv_wide, B, T, C, NH, dropout_p, seed);
    if (probs) kernels::attention_flash_probs(probs, qkv_wide, lse, B, T, C, NH);
  }
  void backward() const {
    if (!dqkv) return;
    kernels::widen_bf16(qkv_wide_back, qkv_bf16, B * T * 3 * C);
    kernels::attention_flash_backward(dqkv, dout, out, qkv_wide_back, lse, B, T, C, NH, dropout_p, seed);
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
  if (qkv.autocast_bf16) {
    const int64_t n = qkv.numel();
    uint16_t* qkv_bf16 = reinterpret_cast<uint16_t*>(new_saved(ctx, floats_for_bf16(n), record));
    float* qkv_wide = new_scratch(ctx, n, record);
    float* qkv_wide_back = record ? new_backward_scratch(ctx, n) : nullptr;
    run_op(ctx,
           AttentionBf16Record{out.data, lse, probs, qkv.grad, out.grad, qkv.data, qkv_bf16, qkv_wide,
                               qkv_wide_back, B, T, C, NH, p, seed},
           record, out, {{&qkv}, /*backward reads only its bf16 copy of qkv*/ 0b0, /*and its output*/ true});
    return out;
  }
  run_op(ctx, AttentionRecord{out.data, lse, probs, qkv.grad, out.grad, qkv.data, B, T, C, NH, p, seed},
         record, out, {{&qkv}, /*backward reads qkv*/ 0b1, /*and its output*/ true});
  return out;
}

}  // namespace autograd
