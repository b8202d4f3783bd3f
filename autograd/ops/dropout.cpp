// The dropout op (inverted): out = x · keep / (1 - p), the mask a pure
// function of (seed, index), so backward regenerates it instead of saving it.
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [dropout].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct DropoutRecord {
  static constexpr const char* kName = "dropout";
  float* dx;
  const float* dout;
  float p;
  uint64_t seed;
  int64_t n;

  void backward(Arena&) const { kernels::dropout_backward(dx, dout, p, seed, n); }
};

}  // namespace

Tensor dropout(const OpContext& ctx, const Tensor& x, float p, uint64_t seed) {
  if (!ctx.tape || p <= 0.0f) return x;  // Note [No hidden modes]
  const bool record = any_needs_grad(x);
  Tensor out = new_output(ctx, x, x.shape[x.ndim - 1], record);
  kernels::dropout_forward(out.data, x.data, p, seed, x.numel());
  if (record) record_op(ctx, DropoutRecord{x.grad, out.grad, p, seed, x.numel()}, out);
  return out;
}

}  // namespace autograd
