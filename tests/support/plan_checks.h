// Test support for the memory planner (Note [Memory planner]): an
// independent check of a plan's one promise about space, written from the
// plan's recorded lives and the meaning of each reuse (Note [Buffer reuse])
// rather than the planner's own code.
#pragma once

#include <cstdint>

#include "autograd/planner.h"

namespace testing {

// Whether buffer a may share floats with buffer b while both live: a lies in
// b where a granted reuse says it may (plan.alias), directly or through the
// buffer it lies in.
//   - A gradient over its tensor's data: the very floats of that data.
//   - A backward scratch in its entry's output gradient: within floats
//     [ceil(n/2), n) of that gradient's n, the half its backward freed.
inline bool lies_in(const autograd::Tape& tape, const autograd::MemoryPlan& plan, size_t a, size_t b) {
  const auto& bufs = tape.buffers();
  for (size_t x = a; plan.alias[x] >= 0;) {
    const auto host = static_cast<size_t>(plan.alias[x]);
    const autograd::TapeBuffer &buf = bufs[x], &h = bufs[host];
    bool allowed = false;
    if (buf.reuse == autograd::Reuse::OverData)
      allowed = buf.role == autograd::BufferRole::Grad && h.role == autograd::BufferRole::Data &&
                h.tensor == buf.tensor && plan.offset[x] == plan.offset[host] && buf.floats == h.floats;
    if (buf.reuse == autograd::Reuse::OutputGradTail) {
      const auto& out = tape.tensors()[static_cast<size_t>(tape.entries()[static_cast<size_t>(buf.entry)].output)];
      const int64_t tail = plan.offset[host] + (h.floats + 1) / 2;
      allowed = buf.role == autograd::BufferRole::BackwardScratch && out.grad == static_cast<int32_t>(host) &&
                tail <= plan.offset[x] && plan.offset[x] + buf.floats <= plan.offset[host] + h.floats;
    }
    if (!allowed) return false;
    if (host == b) return true;
    x = host;
  }
  return false;
}

// Pairs of buffers that are alive at the same moment and share a float,
// other than a buffer and the one it may lie in (lies_in).
inline int64_t clashing_buffer_pairs(const autograd::Tape& tape, const autograd::MemoryPlan& plan) {
  auto overlap = [](int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
    return a0 <= a1 && b0 <= b1 && a0 <= b1 && b0 <= a1;
  };
  const size_t n = tape.buffers().size();
  int64_t clashes = 0;
  for (size_t a = 0; a < n; ++a)
    for (size_t b = a + 1; b < n; ++b) {
      const bool together = overlap(plan.first[a], plan.last[a], plan.first[b], plan.last[b]) ||
                            overlap(plan.first[a], plan.last[a], plan.first2[b], plan.last2[b]) ||
                            overlap(plan.first2[a], plan.last2[a], plan.first[b], plan.last[b]) ||
                            overlap(plan.first2[a], plan.last2[a], plan.first2[b], plan.last2[b]);
      const bool share = plan.offset[a] < plan.offset[b] + plan.floats[b] &&
                         plan.offset[b] < plan.offset[a] + plan.floats[a];
      clashes += together && share && !lies_in(tape, plan, a, b) && !lies_in(tape, plan, b, a);
    }
  return clashes;
}

}  // namespace testing
