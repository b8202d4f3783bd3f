// Test support for the memory planner (Note [Memory planner]): an
// independent check of a plan's one promise about space, written from the
// plan's recorded lives rather than the planner's own code.
#pragma once

#include <cstdint>

#include "autograd/planner.h"

namespace testing {

// Pairs of buffers that are alive at the same moment and share a float.
// A gradient written over its tensor's data (plan.alias) is not a clash.
inline int64_t clashing_buffer_pairs(const autograd::Tape& tape, const autograd::MemoryPlan& plan) {
  auto overlap = [](int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
    return a0 <= a1 && b0 <= b1 && a0 <= b1 && b0 <= a1;
  };
  const size_t n = tape.buffers().size();
  int64_t clashes = 0;
  for (size_t a = 0; a < n; ++a)
    for (size_t b = a + 1; b < n; ++b) {
      if (plan.alias[a] == static_cast<int32_t>(b) || plan.alias[b] == static_cast<int32_t>(a)) continue;
      const bool together = overlap(plan.first[a], plan.last[a], plan.first[b], plan.last[b]) ||
                            overlap(plan.first[a], plan.last[a], plan.first2[b], plan.last2[b]) ||
                            overlap(plan.first2[a], plan.last2[a], plan.first[b], plan.last[b]) ||
                            overlap(plan.first2[a], plan.last2[a], plan.first2[b], plan.last2[b]);
      const bool share = plan.offset[a] < plan.offset[b] + plan.floats[b] &&
                         plan.offset[b] < plan.offset[a] + plan.floats[a];
      clashes += together && share;
    }
  return clashes;
}

}  // namespace testing
