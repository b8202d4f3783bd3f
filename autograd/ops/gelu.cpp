// The GELU op, tanh (GPT-2's) or erf (PyTorch's nn.GELU()) form.
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [gelu].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct GeluRecord {
  static constexpr const char* kName = "gelu";
  float* dx;
  const float* dout;
  const float* x;
  int64_t n;
  kernels::GeluKind kind;

  void backward(Arena&) const { kernels::gelu_backward(dx, dout, x, n, kind); }
};

// Note [Scratch activations]: runs before the backwards that read out.
struct GeluRecomputeRecord {
  static constexpr const char* kName = "gelu_recompute";
  float* out;
  const float* x;
  int64_t n;
  kernels::GeluKind kind;

  void backward(Arena&) const { kernels::gelu_forward(out, x, n, kind); }
};

}  // namespace

Tensor gelu(const OpContext& ctx, const Tensor& x, kernels::GeluKind kind) {
  const bool record = ctx.tape && any_needs_grad(x);
  Tensor out = new_output(ctx, x, x.shape[x.ndim - 1], record);
  kernels::gelu_forward(out.data, x.data, x.numel(), kind);
  if (record) record_op(ctx, GeluRecord{x.grad, out.grad, x.data, x.numel(), kind}, out);
  return out;
}

void gelu_recompute(const OpContext& ctx, const Tensor& out, const Tensor& x,
                    kernels::GeluKind kind) {
  TG_CHECK(out.numel() == x.numel());
  if (ctx.tape) ctx.tape->record(GeluRecomputeRecord{out.data, x.data, x.numel(), kind});
}

}  // namespace autograd
