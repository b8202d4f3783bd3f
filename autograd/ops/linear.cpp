// The linear op: out[N,OC] = x[N,IC] · weight[OC,IC]ᵀ + bias[OC].
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [linear].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct LinearRecord {
  static constexpr const char* kName = "linear";
  float* out;
  float* dx;  // any of the three may be null
  float* dweight;
  float* dbias;
  const float* dout;
  const float* x;
  const float* weight;
  const float* bias;  // may be null
  int64_t N, IC, OC;

  void forward() const { kernels::linear_forward(out, x, weight, bias, N, IC, OC); }
  void backward() const {
    kernels::linear_backward(dx, dweight, dbias, dout, x, weight, N, IC, OC);
  }
};

}  // namespace

Tensor linear(const OpContext& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const int64_t IC = x.shape[x.ndim - 1], OC = weight.size(0), N = rows(x);
  TG_CHECK(weight.size(1) == IC);
  TG_CHECK(!bias.defined() || bias.numel() == OC);
  const bool record = records(ctx, x, weight, bias);
  Tensor out = new_output(ctx, x, OC, record);
  run_op(ctx,
         LinearRecord{out.data, x.grad, weight.grad, bias.grad, out.grad, x.data, weight.data,
                      bias.data, N, IC, OC},
         record, out, {{&x, &weight, &bias}, /*backward reads x*/ 0b001});
  return out;
}

}  // namespace autograd
