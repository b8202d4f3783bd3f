// The LayerNorm op over the last dimension (eps 1e-5), saving each row's
// mean and 1/std for backward. Cheaper to run again than to keep: the
// planner may recompute its output in backward (Note [Memory planner] in
// planner.h); the rerun writes the saved mean and 1/std again, same bits.
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [layernorm].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct LayerNormRecord {
  static constexpr const char* kName = "layernorm";
  static constexpr bool kRecomputable = true;
  float* out;
  float* mean;  // [N], saved for backward
  float* rstd;  // [N]
  float* dx;    // any of the three may be null
  float* dweight;
  float* dbias;
  const float* dout;
  const float* x;
  const float* weight;
  const float* bias;  // may be null
  int64_t N, C;

  void forward() const { kernels::layernorm_forward(out, mean, rstd, x, weight, bias, N, C); }
  void backward() const {
    kernels::layernorm_backward(dx, dweight, dbias, dout, x, weight, mean, rstd, N, C);
  }
};

}  // namespace

Tensor layernorm(const OpContext& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const int64_t C = x.shape[x.ndim - 1], N = rows(x);
  TG_CHECK(weight.numel() == C && (!bias.defined() || bias.numel() == C));
  const bool record = records(ctx, x, weight, bias);
  Tensor out = new_output(ctx, x, C, record);
  float* mean = new_saved(ctx, N, record);
  float* rstd = new_saved(ctx, N, record);
  run_op(ctx,
         LayerNormRecord{out.data, mean, rstd, x.grad, weight.grad, bias.grad, out.grad, x.data,
                         weight.data, bias.data, N, C},
         record, out, EntryUses{&x, &weight, &bias}.saves(x, weight));
  return out;
}

}  // namespace autograd
