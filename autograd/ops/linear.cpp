// The linear op: out[N,OC] = x[N,IC] · weight[OC,IC]ᵀ + bias[OC], in float32,
// or with bf16 operands in a bf16 run (Note [bf16 linear]).
// Gradient checks: tests/autograd/test_ops_gradcheck.cpp [linear], and
// [linear_bf16] in tests/autograd/test_linear_bf16_op.cpp.
#include "autograd/kernels/bf16.h"
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct LinearRecord {
  static constexpr const char* kName = "linear";
  float* out;
  float* dx;  // any of the three may be null
  float* dweight;
  float* dbias;
  const float* dout;
  const float* x;
  const float* weight;
  const float* bias;  // may be null
  int64_t N, IC, OC;

  void forward() const { kernels::linear_forward(out, x, weight, bias, N, IC, OC); }
  void backward() const {
    kernels::linear_backward(dx, dweight, dbias, dout, x, weight, N, IC, OC);
  }
};

// Note [bf16 linear]
// Mixed precision: the matmul operands x, weight and (in backward) dout are
// rounded to bf16 and summed in float32, as under PyTorch's autocast; the
// output, the bias and every gradient stay float32 (autocast's linear
// returns its output rounded to bf16; here the next op reads the sum). The weight's copy
// is the high plane of its split master in the parameter store, written by
// the optimizer's pass with the weight itself, once per step; the op finds it
// through its context (RunPrecision::bf16_copy, Note [Run precision]).
// x is rounded into scratch in forward and again in backward, from the
// float32 x the planner keeps or recomputes as for the float32 op: keeping
// x's bf16 copy instead measured worse, since the x of most linears
// (LayerNorm's, GELU's output) is recomputed and costs nothing to keep.
// dout is rounded over itself (round_to_bf16_in_place): its producer's
// backward is its last reader, so the largest buffer of a step, the
// logits' gradient, gets no bf16 twin. The bias gradient sums dout in
// float32 first. x's backward copy is backward scratch that asks the
// planner for dout's second half, which the rounding freed (Reuse::
// OutputGradTail, Note [Buffer reuse] in planner.h); it fits when IC ≤ OC
// (every linear of a GPT but the MLP's c_proj), so the lm_head's needs no
// floats beside the logits.
struct LinearBf16Record {
  static constexpr const char* kName = "linear_bf16";
  float* out;
  float* dx;  // any of the three may be null
  float* dweight;
  float* dbias;
  float* dout;  // rounded to bf16 over itself in backward
  const float* x;
  uint16_t* x_bf16;       // forward scratch
  uint16_t* x_bf16_back;  // backward scratch, maybe in dout's second half; null without dweight
  const uint16_t* weight;
  const float* bias;  // may be null
  int64_t N, IC, OC;

  void forward() const { kernels::linear_forward_bf16_rounding(out, x, x_bf16, weight, bias, N, IC, OC); }
  void backward() const {
    if (dbias) kernels::linear_backward(nullptr, nullptr, dbias, dout, nullptr, nullptr, N, IC, OC);
    if (!dx && !dweight) return;
    // Frees dout's second half, where x's copy may lie (Note [bf16 linear]).
    uint16_t* dout_bf16 = kernels::round_to_bf16_in_place(dout, N * OC);
    if (dweight) kernels::round_to_bf16(x_bf16_back, x, N * IC);
    kernels::linear_backward_bf16(dx, dweight, dout_bf16, x_bf16_back, weight, N, IC, OC);
  }
};

}  // namespace

Tensor linear(const OpContext& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const int64_t IC = x.shape[x.ndim - 1], OC = weight.size(0), N = rows(x);
  TG_CHECK(weight.size(1) == IC);
  TG_CHECK(!bias.defined() || bias.numel() == OC);
  const bool record = records(ctx, x, weight, bias);
  Tensor out = new_output(ctx, x, OC, record);
  if (ctx.precision.bf16()) {
    const uint16_t* weight_bf16 = ctx.precision.bf16_copy(weight);
    TG_CHECK(weight_bf16 != nullptr);  // a bf16 run's linear weights are split masters
    uint16_t* x_bf16 = as_bf16(new_scratch(ctx, floats_for_bf16(N * IC), record));
    uint16_t* x_bf16_back =
        record && weight.needs_grad()
            ? as_bf16(new_backward_scratch(ctx, floats_for_bf16(N * IC), Reuse::OutputGradTail))
            : nullptr;
    run_op(ctx,
           LinearBf16Record{out.data, x.grad, weight.grad, bias.grad, out.grad, x.data, x_bf16, x_bf16_back,
                            weight_bf16, bias.data, N, IC, OC},
           record, out, EntryUses{&x, &weight, &bias}.saves(x, weight));  // x: to round it again
    return out;
  }
  run_op(ctx,
         LinearRecord{out.data, x.grad, weight.grad, bias.grad, out.grad, x.data, weight.data,
                      bias.data, N, IC, OC},
         record, out, EntryUses{&x, &weight, &bias}.saves(x, weight));
  return out;
}

}  // namespace autograd
