// The logit soft-cap op, out = cap·tanh(x/cap) (modded-nanoGPT's and
// nanochat's, before the loss). Its output is the loss's input, which
// cross_entropy overwrites with the probabilities, so backward reads x, not
// the output; and it is not recomputable, since a rerun would write over
// those probabilities. Like cross_entropy it lets the planner write x's
// gradient over x (Note [Gradient over data] in ops.h): its backward reads
// each x once, just before writing that element's gradient.
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [softcap].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct SoftcapRecord {
  static constexpr const char* kName = "softcap";
  float* out;
  float* dx;  // may be x itself (the planner's choice)
  const float* dout;
  const float* x;
  int64_t n;
  float cap;

  void forward() const { kernels::softcap_forward(out, x, n, cap); }
  void backward() const { kernels::softcap_backward(dx, dout, x, n, cap); }
};

}  // namespace

Tensor softcap(const OpContext& ctx, const Tensor& x, float cap) {
  TG_CHECK(cap > 0.0f);
  const bool record = records(ctx, x);
  Tensor out = new_output(ctx, x, x.shape[x.ndim - 1], record);
  run_op(ctx, SoftcapRecord{out.data, x.grad, out.grad, x.data, x.numel(), cap}, record, out,
         EntryUses{&x}.saves(x).may_write_grad_over_data(x));
  return out;
}

}  // namespace autograd
