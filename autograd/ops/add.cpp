// The residual add op: out = a + b.
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [add].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct AddRecord {
  static constexpr const char* kName = "add";
  float* out;
  float* da;  // either may be null
  float* db;
  const float* dout;
  const float* a;
  const float* b;
  int64_t n;

  void forward() const { kernels::add_forward(out, a, b, n); }
  // ∂(a+b)/∂a = ∂(a+b)/∂b = 1
  void backward() const {
    if (da) kernels::accumulate(da, dout, n);
    if (db) kernels::accumulate(db, dout, n);
  }
};

}  // namespace

Tensor add(const OpContext& ctx, const Tensor& a, const Tensor& b) {
  TG_CHECK(a.numel() == b.numel());
  const bool record = records(ctx, a, b);
  Tensor out = new_output(ctx, a, a.shape[a.ndim - 1], record);
  run_op(ctx, AddRecord{out.data, a.grad, b.grad, out.grad, a.data, b.data, a.numel()}, record,
         out, EntryUses{&a, &b});
  return out;
}

}  // namespace autograd
