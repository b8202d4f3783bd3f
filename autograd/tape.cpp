// Tape::backward: one reverse loop over the records (Note [Op records]).
#include "autograd/tape.h"

#include <cstring>

#include "autograd/base/check.h"

namespace autograd {

namespace {

// Zeroes n floats on every thread: the other threads would otherwise wait
// through it (the zeroed buffers are megabytes at training shapes).
void zero_floats(float* p, int64_t n) {
  constexpr int64_t kChunk = 16384;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (chunks > 4)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t start = c * kChunk, len = n - start < kChunk ? n - start : kChunk;
    std::memset(p + start, 0, static_cast<size_t>(len) * sizeof(float));
  }
}

}  // namespace

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
      zero_floats(e.zero_after, e.zero_floats);
    if (after_entry) after_entry(i);
  }
}

}  // namespace autograd
