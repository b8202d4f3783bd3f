// The RMSNorm op over the last dimension (eps 1e-5, a gain and no bias, as
// Llama's), saving each row's 1/rms for backward. Cheaper to run again than
// to keep: the planner may recompute its output (Note [Memory planner]).
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [rmsnorm].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct RMSNormRecord {
  static constexpr const char* kName = "rmsnorm";
  static constexpr bool kRecomputable = true;
  float* out;
  float* rstd;  // [N], saved for backward
  float* dx;    // either may be null
  float* dweight;
  const float* dout;
  const float* x;
  const float* weight;
  int64_t N, C;

  void forward() const { kernels::rmsnorm_forward(out, rstd, x, weight, N, C); }
  void backward() const { kernels::rmsnorm_backward(dx, dweight, dout, x, weight, rstd, N, C); }
};

}  // namespace

Tensor rmsnorm(const OpContext& ctx, const Tensor& x, const Tensor& weight) {
  const int64_t C = x.shape[x.ndim - 1], N = rows(x);
  TG_CHECK(weight.numel() == C);
  const bool record = records(ctx, x, weight);
  Tensor out = new_output(ctx, x, C, record);
  float* rstd = new_saved(ctx, N, record);
  run_op(ctx, RMSNormRecord{out.data, rstd, x.grad, weight.grad, out.grad, x.data, weight.data, N, C},
         record, out, EntryUses{&x, &weight}.saves(x, weight));
  return out;
}

}  // namespace autograd
