// Tape::backward: one reverse loop over the records (Note [Op records]).
#include "autograd/tape.h"

#include <cstring>

#include "autograd/base/check.h"

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
    e.backward(e.record, arena);
    if (e.zero_after)  // read for the last time: free for the next gradient placed there
      std::memset(e.zero_after, 0, static_cast<size_t>(e.zero_floats) * sizeof(float));
    if (after_entry) after_entry(i);
  }
}

}  // namespace autograd
