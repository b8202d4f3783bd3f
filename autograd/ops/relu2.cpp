// The ReLU² op, out = max(x, 0)² (modded-nanoGPT's MLP activation). Cheaper
// to run again than to keep: the planner may recompute its output.
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [relu2].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct Relu2Record {
  static constexpr const char* kName = "relu2";
  static constexpr bool kRecomputable = true;
  float* out;
  float* dx;
  const float* dout;
  const float* x;
  int64_t n;

  void forward() const { kernels::relu2_forward(out, x, n); }
  void backward() const { kernels::relu2_backward(dx, dout, x, n); }
};

}  // namespace

Tensor relu2(const OpContext& ctx, const Tensor& x) {
  const bool record = records(ctx, x);
  Tensor out = new_output(ctx, x, x.shape[x.ndim - 1], record);
  run_op(ctx, Relu2Record{out.data, x.grad, out.grad, x.data, x.numel()}, record, out,
         EntryUses{&x}.saves(x));
  return out;
}

}  // namespace autograd
