// Arena: a bump allocator for one step's activations, the buffers saved for
// backward and the activations' gradient buffers (shared across layers where
// the caller places them so: Note [Gradient liveness] in ops.h). reset()
// frees everything at once.
//
// The first step may need several blocks; reset() then replaces them with one
// block of the peak size, so from the second step on alloc() never touches
// the heap (tests/autograd checks this through heap_allocations()).
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/buffer.h"
#include "autograd/base/check.h"

namespace autograd {

class Arena {
 public:
  explicit Arena(int64_t initial_floats = 0);

  float* alloc(int64_t n);          // 64-byte aligned; contents undefined
  float* alloc_zeroed(int64_t n);
  void reset();

  int64_t peak_floats() const { return peak_; }
  int64_t capacity_floats() const;
  int64_t heap_allocations() const { return heap_allocations_; }

 private:
  std::vector<FloatBuffer> blocks_;
  int64_t offset_ = 0;  // next free float in blocks_.back()
  int64_t used_ = 0;    // floats handed out since the last reset (for peak_)
  int64_t peak_ = 0;
  int64_t heap_allocations_ = 0;
};

}  // namespace autograd
