// Tape::backward: one reverse loop over the records, one switch over kinds.
#include "autograd/tape.h"

#include "autograd/arena.h"
#include "autograd/kernels/attention_flash.h"
#include "autograd/kernels/kernels.h"

namespace autograd {

void Tape::backward(const Tensor& loss, Arena& arena, float seed,
                    const std::function<void(size_t)>& after_entry) {
  TG_CHECK(loss.numel() == 1 && loss.needs_grad());
  loss.grad[0] += seed;
  replay_backward(arena, after_entry);
}

void Tape::replay_backward(Arena& arena, const std::function<void(size_t)>& after_entry) {
  for (size_t i = entries_.size(); i-- > 0;) {
    const TapeEntry& e = entries_[i];
    const Tensor& x = e.in[0];
    switch (e.kind) {
      case OpKind::Embedding:
        kernels::embedding_backward(x.grad, e.in[1].grad, e.out.grad, e.ids, e.n[0], e.n[1],
                                    e.n[2]);
        break;
      case OpKind::Add:
        // ∂(a+b)/∂a = ∂(a+b)/∂b = 1
        if (x.grad) kernels::accumulate(x.grad, e.out.grad, e.n[0]);
        if (e.in[1].grad) kernels::accumulate(e.in[1].grad, e.out.grad, e.n[0]);
        break;
      case OpKind::Linear:
        kernels::linear_backward(x.grad, e.in[1].grad, e.in[2].grad, e.out.grad, x.data,
                                 e.in[1].data, e.n[0], e.n[1], e.n[2]);
        break;
      case OpKind::LayerNorm:
        kernels::layernorm_backward(x.grad, e.in[1].grad, e.in[2].grad, e.out.grad, x.data,
                                    e.in[1].data, e.saved[0], e.saved[1], e.n[0], e.n[1]);
        break;
      case OpKind::Gelu:
        if (x.grad)
          kernels::gelu_backward(x.grad, e.out.grad, x.data, e.n[0],
                                 static_cast<kernels::GeluKind>(e.n[1]));
        break;
      case OpKind::Attention:
        // Recomputes the probabilities blockwise from q, k and the saved
        // log-sum-exp; reads the forward output (never modified in place).
        kernels::attention_flash_backward(x.grad, e.out.grad, e.out.data, x.data, e.saved[0],
                                          e.n[0], e.n[1], e.n[2], e.n[3], e.p, e.seed);
        break;
      case OpKind::AttentionNaive: {
        const int64_t B = e.n[0], T = e.n[1], C = e.n[2], NH = e.n[3];
        float* scratch = arena.alloc(B * NH * T * T);
        kernels::attention_backward(x.grad, scratch, e.out.grad, x.data, e.saved[0], B, T, C,
                                    NH, e.p, e.seed);
        break;
      }
      case OpKind::Dropout:
        if (x.grad) kernels::dropout_backward(x.grad, e.out.grad, e.p, e.seed, e.n[0]);
        break;
      case OpKind::CrossEntropy:
        // d(mean loss)/d logits = (probs - onehot) / N, times d(out).
        kernels::crossentropy_backward(x.grad, e.saved[0], e.ids,
                                       e.out.grad[0] / static_cast<float>(e.n[0]), e.n[0],
                                       e.n[1]);
        break;
    }
    if (after_entry) after_entry(i);
  }
}

}  // namespace autograd
