// The dropout op (inverted): out = x · keep / (1 - p), the mask a pure
// function of (seed, index), so backward regenerates it instead of saving it.
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [dropout].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct DropoutRecord {
  static constexpr const char* kName = "dropout";
  float* out;
  float* dx;
  const float* dout;
  const float* x;
  float p;
  uint64_t seed;
  int64_t n;

  void forward() const { kernels::dropout_forward(out, x, p, seed, n); }
  void backward() const { kernels::dropout_backward(dx, dout, p, seed, n); }
};

}  // namespace

Tensor dropout(const OpContext& ctx, const Tensor& x, float p, uint64_t seed) {
  if (!ctx.tape || p <= 0.0f) return x;  // Note [No hidden modes]
  const bool record = records(ctx, x);
  Tensor out = new_output(ctx, x, x.shape[x.ndim - 1], record);
  run_op(ctx, DropoutRecord{out.data, x.grad, out.grad, x.data, p, seed, x.numel()}, record, out,
         EntryUses{&x});
  return out;
}

}  // namespace autograd
