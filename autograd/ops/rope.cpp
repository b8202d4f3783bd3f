// The rotary position embedding op: q and k of qkv[B,T,3C] rotated per head
// by their positions pos0…pos0+T-1, v passed through (kernels.h's RoPE).
// Not recomputable: running it again would need its input kept instead of
// its output, the same floats.
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [rope].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct RopeRecord {
  static constexpr const char* kName = "rope";
  float* out;
  float* dqkv;
  const float* dout;
  const float* qkv;
  int64_t B, T, C, NH, pos0;

  void forward() const { kernels::rope_forward(out, qkv, B, T, C, NH, pos0); }
  // The rotation is orthogonal: backward rotates the gradient back.
  void backward() const { kernels::rope_backward(dqkv, dout, B, T, C, NH, pos0); }
};

}  // namespace

Tensor rope(const OpContext& ctx, const Tensor& qkv, int64_t n_head, int64_t pos0) {
  TG_CHECK(qkv.ndim == 3 && qkv.size(2) % 3 == 0);
  const int64_t B = qkv.size(0), T = qkv.size(1), C = qkv.size(2) / 3;
  TG_CHECK(C % n_head == 0 && (C / n_head) % 2 == 0);
  const bool record = records(ctx, qkv);
  Tensor out = new_output(ctx, qkv, 3 * C, record);
  run_op(ctx, RopeRecord{out.data, qkv.grad, out.grad, qkv.data, B, T, C, n_head, pos0}, record,
         out, EntryUses{&qkv});
  return out;
}

}  // namespace autograd
