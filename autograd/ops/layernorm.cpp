// The LayerNorm op over the last dimension (eps 1e-5), saving each row's
// mean and 1/std for backward.
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [layernorm].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct LayerNormRecord {
  static constexpr const char* kName = "layernorm";
  float* dx;  // any of the three may be null
  float* dweight;
  float* dbias;
  const float* dout;
  const float* x;
  const float* weight;
  const float* mean;  // [N], saved by the forward
  const float* rstd;  // [N]
  int64_t N, C;

  void backward(Arena&) const {
    kernels::layernorm_backward(dx, dweight, dbias, dout, x, weight, mean, rstd, N, C);
  }
};

// Note [Scratch activations]: runs before the backwards that read out. The
// mean and 1/std come out as the forward's did; they go to buffers of their
// own, as the forward's are not at hand.
struct LayerNormRecomputeRecord {
  static constexpr const char* kName = "layernorm_recompute";
  float* out;
  float* mean;
  float* rstd;
  const float* x;
  const float* weight;
  const float* bias;  // may be null
  int64_t N, C;

  void backward(Arena&) const {
    kernels::layernorm_forward(out, mean, rstd, x, weight, bias, N, C);
  }
};

}  // namespace

Tensor layernorm(const OpContext& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const int64_t C = x.shape[x.ndim - 1], N = rows(x);
  TG_CHECK(weight.numel() == C && (!bias.defined() || bias.numel() == C));
  const bool record = ctx.tape && any_needs_grad(x, weight, bias);
  Tensor out = new_output(ctx, x, C, record);
  float* mean = ctx.arena->alloc(N);
  float* rstd = ctx.arena->alloc(N);
  kernels::layernorm_forward(out.data, mean, rstd, x.data, weight.data, bias.data, N, C);
  if (record)
    record_op(ctx,
              LayerNormRecord{x.grad, weight.grad, bias.grad, out.grad, x.data, weight.data, mean,
                              rstd, N, C},
              out);
  return out;
}

void layernorm_recompute(const OpContext& ctx, const Tensor& out, const Tensor& x,
                         const Tensor& weight, const Tensor& bias) {
  TG_CHECK(out.numel() == x.numel());
  if (!ctx.tape) return;
  const int64_t C = x.shape[x.ndim - 1], N = rows(x);
  ctx.tape->record(LayerNormRecomputeRecord{out.data, ctx.arena->alloc(N), ctx.arena->alloc(N),
                                            x.data, weight.data, bias.data, N, C});
}

}  // namespace autograd
