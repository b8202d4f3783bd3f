// The embedding op: out[b,t,:] = wte[ids[b,t],:] + wpe[t,:].
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [embedding].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct EmbeddingRecord {
  static constexpr const char* kName = "embedding";
  float* dwte;  // either may be null
  float* dwpe;
  const float* dout;
  const int32_t* ids;
  int64_t B, T, C;

  void backward(Arena&) const { kernels::embedding_backward(dwte, dwpe, dout, ids, B, T, C); }
};

}  // namespace

Tensor embedding(const OpContext& ctx, const int32_t* ids, int64_t B, int64_t T, const Tensor& wte,
                 const Tensor& wpe) {
  const int64_t C = wte.size(1);
  TG_CHECK(wpe.size(1) == C && T <= wpe.size(0));
  const bool record = ctx.tape && any_needs_grad(wte, wpe);
  Tensor out = new_output(ctx, tensor_view(nullptr, nullptr, {B, T, C}), C, record);
  kernels::embedding_forward(out.data, ids, wte.data, wpe.data, B, T, C);
  if (record) record_op(ctx, EmbeddingRecord{wte.grad, wpe.grad, out.grad, ids, B, T, C}, out);
  return out;
}

}  // namespace autograd
