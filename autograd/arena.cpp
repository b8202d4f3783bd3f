// Arena implementation (see arena.h).
#include "autograd/arena.h"

#include <algorithm>
#include <cstring>

namespace autograd {

namespace {
constexpr int64_t kAlignFloats = 16;               // 64 bytes
constexpr int64_t kMinBlockFloats = int64_t{1} << 20;  // 4 MiB
int64_t round_up(int64_t n) { return (n + kAlignFloats - 1) / kAlignFloats * kAlignFloats; }
}  // namespace

Arena::Arena(int64_t initial_floats) {
  blocks_.reserve(16);
  if (initial_floats > 0) {
    blocks_.emplace_back(round_up(initial_floats));
    ++heap_allocations_;
  }
}

int64_t Arena::capacity_floats() const {
  int64_t total = 0;
  for (const FloatBuffer& b : blocks_) total += b.size();
  return total;
}

float* Arena::alloc(int64_t n) {
  TG_CHECK(n >= 0);
  const int64_t need = round_up(std::max<int64_t>(n, 1));
  if (blocks_.empty() || offset_ + need > blocks_.back().size()) {
    blocks_.emplace_back(std::max(need, kMinBlockFloats));
    ++heap_allocations_;
    offset_ = 0;
  }
  float* p = blocks_.back().data() + offset_;
  offset_ += need;
  used_ += need;
  peak_ = std::max(peak_, used_);
  return p;
}

float* Arena::alloc_zeroed(int64_t n) {
  float* p = alloc(n);
  std::memset(p, 0, static_cast<size_t>(n) * sizeof(float));
  return p;
}

void Arena::reset() {
  if (blocks_.size() > 1) {
    // Consolidate: one block that holds the whole peak (the first step's
    // block tails were wasted; allocations repeat in the same order, so the
    // peak of floats handed out is exactly what one block needs).
    const int64_t total = peak_;
    blocks_.clear();
    blocks_.emplace_back(total);
    ++heap_allocations_;
  }
  offset_ = 0;
  used_ = 0;
}

}  // namespace autograd
