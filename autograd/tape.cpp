// Tape::backward: one reverse loop over the records (Note [Op records]).
#include "autograd/tape.h"

#include "autograd/base/check.h"

namespace autograd {

void Tape::backward(const Tensor& loss, Arena& arena, float seed) {
  TG_CHECK(loss.numel() == 1 && loss.needs_grad());
  loss.grad[0] += seed;
  replay_backward(arena);
}

void Tape::replay_backward(Arena& arena) {
  for (size_t i = entries_.size(); i-- > 0;) entries_[i].backward(entries_[i].record, arena);
}

}  // namespace autograd
