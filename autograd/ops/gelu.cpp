// The GELU op, tanh (GPT-2's) or erf (PyTorch's nn.GELU()) form. Cheaper to
// run again than to keep: the planner may recompute its output in backward
// (Note [Memory planner] in planner.h).
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [gelu].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct GeluRecord {
  static constexpr const char* kName = "gelu";
  static constexpr bool kRecomputable = true;
  float* out;
  float* dx;
  const float* dout;
  const float* x;
  int64_t n;
  kernels::GeluKind kind;

  void forward() const { kernels::gelu_forward(out, x, n, kind); }
  void backward() const { kernels::gelu_backward(dx, dout, x, n, kind); }
};

}  // namespace

Tensor gelu(const OpContext& ctx, const Tensor& x, kernels::GeluKind kind) {
  const bool record = records(ctx, x);
  Tensor out = new_output(ctx, x, x.shape[x.ndim - 1], record);
  run_op(ctx, GeluRecord{out.data, x.grad, out.grad, x.data, x.numel(), kind}, record, out,
         EntryUses{&x}.saves(x));
  return out;
}

}  // namespace autograd
