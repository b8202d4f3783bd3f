// The tape: a flat list of op records in execution order. backward() is one
// reverse loop with a switch over the op kind, calling each op's backward
// kernel (Note [Kernel conventions]: gradients accumulate). The tape knows
// nothing of GPTs: it only replays what the ops recorded.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "autograd/tensor.h"

namespace autograd {

enum class OpKind : uint8_t {
  Embedding,     // in: wte, wpe; ids           out = wte[ids] + wpe[t]
  Add,           // in: a, b                    out = a + b
  Linear,        // in: x, weight, bias         out = x·weightᵀ + bias
  LayerNorm,     // in: x, weight, bias; saved: mean, rstd
  Gelu,          // in: x
  Attention,     // in: qkv; saved: lse; reads out   blockwise (flash) causal attention
  AttentionNaive,  // in: qkv; saved: att (T×T)    the naive kernel, kept for comparison
  Dropout,       // in: x; seed, p
  CrossEntropy,  // in: logits; saved: probs; ids = targets; out = mean loss
};

// Plain data: what backward reads, nothing more. Inputs that need no
// gradient have a null grad and are skipped by the kernels.
struct TapeEntry {
  OpKind kind = OpKind::Add;
  Tensor out;
  Tensor in[3];
  float* saved[2] = {nullptr, nullptr};
  const int32_t* ids = nullptr;
  int64_t n[4] = {0, 0, 0, 0};  // sizes, op-specific (see ops.cpp)
  float p = 0.0f;
  uint64_t seed = 0;
};

class Arena;

class Tape {
 public:
  // Capacity is kept across clear(), so recording allocates only on the
  // first step.
  void record(const TapeEntry& e) { entries_.push_back(e); }
  void clear() { entries_.clear(); }
  size_t size() const { return entries_.size(); }
  const TapeEntry& operator[](size_t i) const { return entries_[i]; }

  // Seeds d(loss) = seed (1, or 1/K for K accumulated micro-batches) and
  // replays the tape in reverse. Scratch buffers come from `arena`.
  // `after_entry`, when given, is called with each entry's index right after
  // its backward ran (the trainer starts gradient all-reduces from it).
  void backward(const Tensor& loss, Arena& arena, float seed = 1.0f,
                const std::function<void(size_t)>& after_entry = nullptr);
  // Replays the tape in reverse with output gradients the caller has already
  // seeded (e.g. a projection d(Σ out·r)/d out = r in gradient checks).
  void replay_backward(Arena& arena, const std::function<void(size_t)>& after_entry = nullptr);

 private:
  std::vector<TapeEntry> entries_;
};

}  // namespace autograd
