// The residual add op: out = a + b.
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [add].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct AddRecord {
  static constexpr const char* kName = "add";
  float* da;  // either may be null
  float* db;
  const float* dout;
  int64_t n;

  // ∂(a+b)/∂a = ∂(a+b)/∂b = 1
  void backward(Arena&) const {
    if (da) kernels::accumulate(da, dout, n);
    if (db) kernels::accumulate(db, dout, n);
  }
};

}  // namespace

Tensor add(const OpContext& ctx, const Tensor& a, const Tensor& b) {
  TG_CHECK(a.numel() == b.numel());
  const bool record = ctx.tape && any_needs_grad(a, b);
  Tensor out = new_output(ctx, a, a.shape[a.ndim - 1], record);
  kernels::add_forward(out.data, a.data, b.data, a.numel());
  if (record) record_op(ctx, AddRecord{a.grad, b.grad, out.grad, a.numel()}, out);
  return out;
}

}  // namespace autograd
