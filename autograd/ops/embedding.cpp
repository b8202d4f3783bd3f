// The embedding op: out[b,t,:] = wte[ids[b,t],:] + wpe[pos0+t,:] (wpe may be
// undefined: no position table; pos0 > 0 in a KV-cache forward).
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [embedding].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct EmbeddingRecord {
  static constexpr const char* kName = "embedding";
  float* out;
  float* dwte;  // either may be null
  float* dwpe;
  const float* dout;
  const int32_t* ids;
  kernels::MasterValues wte;
  kernels::MasterValues wpe;  // undefined: none
  int64_t B, T, C;

  void forward() const { kernels::embedding_forward(out, ids, wte, wpe, B, T, C); }
  void backward() const { kernels::embedding_backward(dwte, dwpe, dout, ids, B, T, C); }
};

}  // namespace

Tensor embedding(const OpContext& ctx, const int32_t* ids, int64_t B, int64_t T, const Tensor& wte,
                 const Tensor& wpe, int64_t pos0) {
  const int64_t C = wte.size(1);
  TG_CHECK(pos0 >= 0 && (!wpe.defined() || (wpe.size(1) == C && pos0 + T <= wpe.size(0))));
  const bool record = records(ctx, wte, wpe);
  Tensor out = new_output(ctx, tensor_view(nullptr, nullptr, {B, T, C}), C, record);
  // The kernels see the position rows from pos0 on as a table of their own.
  float* dwpe = wpe.grad ? wpe.grad + pos0 * C : nullptr;
  run_op(ctx,
         EmbeddingRecord{out.data, wte.grad, dwpe, out.grad, ids, ctx.precision.values(wte),
                         ctx.precision.values(wpe).from(pos0 * C), B, T, C},
         record, out, EntryUses{&wte, &wpe});
  return out;
}

}  // namespace autograd
