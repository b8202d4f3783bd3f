// The loss op: the mean over rows of -log softmax(logits)[target]. The
// softmax is written over the logits (ops.h says why; the signature says so),
// and so is the logits' gradient when placed over their data (Note [Gradient
// liveness]): this op is their one consumer and writes it.
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [cross_entropy].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct CrossEntropyRecord {
  static constexpr const char* kName = "cross_entropy";
  float* dlogits;       // may be probs itself: the gradient then replaces them
  const float* probs;  // [N,V]: the logits' storage, overwritten by the forward
  const int32_t* targets;
  const float* dloss;  // the mean loss's gradient, read when backward runs
  int64_t N, V;

  // d(mean loss)/d logits = (probs - onehot) / N, times d(loss).
  void backward(Arena&) const {
    kernels::crossentropy_backward(dlogits, probs, targets, dloss[0] / static_cast<float>(N), N,
                                   V);
  }
};

}  // namespace

Tensor cross_entropy(const OpContext& ctx, Tensor&& logits, const int32_t* targets, float* losses) {
  const int64_t V = logits.shape[logits.ndim - 1], N = rows(logits);
  const bool record = ctx.tape && logits.needs_grad();
  if (!losses) losses = ctx.arena->alloc(N);
  kernels::crossentropy_forward(losses, logits.data, logits.data, targets, N, V);
  // The mean in double, rows in order: deterministic and exact enough.
  double sum = 0.0;
  for (int64_t n = 0; n < N; ++n) sum += losses[n];
  Tensor out = tensor_view(ctx.arena->alloc(1), record ? ctx.arena->alloc_zeroed(1) : nullptr, {1});
  out.data[0] = static_cast<float>(sum / static_cast<double>(N));
  // The loss's gradient is always its own: the tape's backward seeds it.
  if (record)
    ctx.tape->record(CrossEntropyRecord{logits.grad, logits.data, targets, out.grad, N, V});
  return out;
}

}  // namespace autograd
