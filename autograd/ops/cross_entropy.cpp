// The loss op: the mean over rows of -log softmax(logits)[target]. The
// softmax is written over the logits (ops.h says why; the signature says so),
// and the op lets the planner put the logits' gradient there too (Note
// [Gradient over data]): it writes that gradient and reads nothing else of
// the logits.
// Gradient check: tests/autograd/test_ops_gradcheck.cpp [cross_entropy].
#include "autograd/ops/op_support.h"

namespace autograd {

namespace {

struct CrossEntropyRecord {
  static constexpr const char* kName = "cross_entropy";
  float* loss;          // [1], the mean
  float* losses;        // [N], each row's
  float* probs;         // [N,V]: the logits' storage, overwritten by the forward
  float* dlogits;       // may be probs itself (the planner's choice): the gradient then replaces them
  const int32_t* targets;
  const float* dloss;   // the mean loss's gradient, read when backward runs
  int64_t N, V;

  void forward() const {
    kernels::crossentropy_forward(losses, probs, probs, targets, N, V);
    // The mean in double, rows in order: deterministic and exact enough.
    double sum = 0.0;
    for (int64_t n = 0; n < N; ++n) sum += losses[n];
    loss[0] = static_cast<float>(sum / static_cast<double>(N));
  }
  // d(mean loss)/d logits = (probs - onehot) / N, times d(loss).
  void backward() const {
    if (!dlogits) return;
    kernels::crossentropy_backward(dlogits, probs, targets, dloss[0] / static_cast<float>(N), N,
                                   V);
  }
};

}  // namespace

Tensor cross_entropy(const OpContext& ctx, Tensor&& logits, const int32_t* targets, float* losses) {
  const int64_t V = logits.shape[logits.ndim - 1], N = rows(logits);
  const bool record = ctx.tape != nullptr && logits.needs_grad();
  if (!losses) losses = new_scratch(ctx, N, record);
  // The loss's gradient is its own: the tape's backward seeds it.
  Tensor out = new_output(ctx, tensor_view(nullptr, nullptr, {1}), 1, record);
  run_op(ctx, CrossEntropyRecord{out.data, losses, logits.data, logits.grad, targets, out.grad, N, V},
         record, out, EntryUses{&logits}.saves(logits).may_write_grad_over_data(logits));  // saves: the probabilities
  return out;
}

}  // namespace autograd
