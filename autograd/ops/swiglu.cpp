// The SwiGLU op: x[…, 2H] = [gate a | value b] → silu(a)·b [… , H] (Llama's
// MLP gate, with c_fc giving both halves). Cheaper to run again than to
// keep: the planner may recompute its output.
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [swiglu].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct SwigluRecord {
  static constexpr const char* kName = "swiglu";
  static constexpr bool kRecomputable = true;
  float* out;
  float* dx;
  const float* dout;
  const float* x;
  int64_t N, H;

  void forward() const { kernels::swiglu_forward(out, x, N, H); }
  void backward() const { kernels::swiglu_backward(dx, dout, x, N, H); }
};

}  // namespace

Tensor swiglu(const OpContext& ctx, const Tensor& x) {
  TG_CHECK(x.shape[x.ndim - 1] % 2 == 0);
  const int64_t H = x.shape[x.ndim - 1] / 2, N = rows(x);
  const bool record = records(ctx, x);
  Tensor out = new_output(ctx, x, H, record);
  run_op(ctx, SwigluRecord{out.data, x.grad, out.grad, x.data, N, H}, record, out,
         EntryUses{&x}.saves(x));
  return out;
}

}  // namespace autograd
