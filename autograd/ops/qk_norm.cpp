// The QK-norm op: each attention head's q and k in qkv[…, 3C] RMS-normed
// with no gain (eps 1e-5, as RMSNorm), v passed through; each head's 1/rms
// saved for backward. modded-nanoGPT and nanochat norm q and k after RoPE:
// RoPE's rotations keep a head's norm, so the order changes no value. Cheaper
// to run again than to keep (Note [Memory planner]).
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [qk_norm].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct QkNormRecord {
  static constexpr const char* kName = "qk_norm";
  static constexpr bool kRecomputable = true;
  float* out;
  float* rstd;  // [N, 2·NH], saved for backward
  float* dqkv;
  const float* dout;
  const float* qkv;
  int64_t N, C, NH;

  void forward() const { kernels::qk_rmsnorm_forward(out, rstd, qkv, N, C, NH); }
  void backward() const { kernels::qk_rmsnorm_backward(dqkv, dout, qkv, rstd, N, C, NH); }
};

}  // namespace

Tensor qk_norm(const OpContext& ctx, const Tensor& qkv, int64_t n_head) {
  const int64_t C3 = qkv.shape[qkv.ndim - 1], N = rows(qkv);
  TG_CHECK(C3 % 3 == 0 && (C3 / 3) % n_head == 0);
  const bool record = records(ctx, qkv);
  Tensor out = new_output(ctx, qkv, C3, record);
  float* rstd = new_saved(ctx, N * 2 * n_head, record);
  run_op(ctx, QkNormRecord{out.data, rstd, qkv.grad, out.grad, qkv.data, N, C3 / 3, n_head}, record, out,
         EntryUses{&qkv}.saves(qkv));
  return out;
}

}  // namespace autograd
