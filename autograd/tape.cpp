// The tape's bookkeeping, its three ways of handing out storage (Note [Tape
// modes]) and Tape::backward, one reverse loop over the entries.
#include "autograd/tape.h"

#include <algorithm>
#include <cstring>

#include "autograd/arena.h"
#include "autograd/base/check.h"
#include "autograd/planner.h"

namespace autograd {

namespace {

// Planning hands out addresses from here, 64-byte aligned and distinct, that
// no kernel ever reads (runs_kernels() is false): a stray read would fault.
constexpr uintptr_t kPlanningBase = uintptr_t{1} << 44;

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

void Tape::clear() {
  entries_.clear();
  tensors_.clear();
  buffers_.clear();
  blocks_.clear();
  in_block_ = false;
  planning_next_ = kPlanningBase;
}

void Tape::begin_planning() {
  mode_ = TapeMode::Planning;
  plan_ = nullptr;
  base_ = nullptr;
  clear();
}

void Tape::use_plan(const MemoryPlan& plan, float* base) {
  TG_CHECK(base != nullptr || plan.total_floats == 0);
  mode_ = TapeMode::Planned;
  plan_ = &plan;
  base_ = base;
}

float* Tape::place(Arena& arena, int64_t floats, bool zeroed) {
  const size_t id = buffers_.size() - 1;  // the buffer just added
  switch (mode_) {
    case TapeMode::Eager:
      return zeroed ? arena.alloc_zeroed(floats) : arena.alloc(floats);
    case TapeMode::Planning: {
      const uintptr_t p = planning_next_;
      planning_next_ += static_cast<uintptr_t>((floats + 16) / 16 * 16) * sizeof(float);
      return reinterpret_cast<float*>(p);
    }
    case TapeMode::Planned:
      // The same code recording the same shapes asks for the same buffers.
      TG_CHECK(id < plan_->floats.size() && plan_->floats[id] == floats);
      return base_ + plan_->offset[id];
  }
  return nullptr;
}

void Tape::new_tensor(Arena& arena, Tensor& out) {
  const auto tid = static_cast<int32_t>(tensors_.size());
  const auto entry = static_cast<int32_t>(entries_.size());
  TapeTensor t;
  t.shape = out.shape;
  t.ndim = out.ndim;
  t.producer = entry;
  const int64_t n = out.numel();
  t.data = static_cast<int32_t>(buffers_.size());
  buffers_.push_back({n, BufferRole::Data, tid, entry});
  out.data = place(arena, n, false);
  t.grad = static_cast<int32_t>(buffers_.size());
  buffers_.push_back({n, BufferRole::Grad, tid, entry});
  out.grad = place(arena, n, true);
  tensors_.push_back(t);
  out.id = tid;
}

float* Tape::new_buffer(Arena& arena, int64_t floats, BufferRole role, Reuse reuse) {
  TG_CHECK(role == BufferRole::Saved || role == BufferRole::Scratch || role == BufferRole::BackwardScratch);
  const auto entry = static_cast<int32_t>(entries_.size());
  // The tail of the entry's output gradient: that output is made first.
  TG_CHECK(reuse == Reuse::None || (reuse == Reuse::OutputGradTail && role == BufferRole::BackwardScratch &&
                                    !tensors_.empty() && tensors_.back().producer == entry));
  buffers_.push_back({floats, role, -1, entry, reuse});
  return place(arena, floats, false);
}

TapeEntry& Tape::push_entry(const Tensor& out, const EntryUses& uses) {
  const auto index = static_cast<int32_t>(entries_.size());
  TG_CHECK(out.id >= 0 && static_cast<size_t>(out.id) < tensors_.size() &&
           tensors_[static_cast<size_t>(out.id)].producer == index);
  TapeEntry& e = entries_.emplace_back();
  auto id_of = [this](const Tensor* t) {
    const int32_t id = t ? t->id : -1;
    TG_CHECK(id < 0 || static_cast<size_t>(id) < tensors_.size());
    return id;
  };
  auto read_by_forward = [&e, &out](int32_t id) {
    return id == out.id || std::find(e.inputs.begin(), e.inputs.end(), id) != e.inputs.end();
  };
  for (size_t i = 0; i < uses.inputs.size(); ++i) e.inputs[i] = id_of(uses.inputs[i]);
  e.output = out.id;
  // Backward reads what forward read or made.
  for (size_t i = 0; i < uses.saved.size(); ++i) {
    e.saved[i] = id_of(uses.saved[i]);
    TG_CHECK(e.saved[i] < 0 || read_by_forward(e.saved[i]));
  }
  if (const int32_t id = id_of(uses.grad_over_data); id >= 0) {
    TG_CHECK(id != out.id && read_by_forward(id));  // an input's gradient
    buffers_[static_cast<size_t>(tensors_[static_cast<size_t>(id)].grad)].reuse = Reuse::OverData;
  }
  return e;
}

void Tape::begin_block(int64_t layer, int part) {
  TG_CHECK(!in_block_);  // blocks do not nest
  in_block_ = true;
  blocks_.push_back({layer, part, entries_.size(), entries_.size()});
}

void Tape::end_block() {
  TG_CHECK(in_block_);
  in_block_ = false;
  blocks_.back().end = entries_.size();
}

void Tape::backward(const Tensor& loss, float seed, const std::function<void(size_t)>& after_entry) {
  TG_CHECK(loss.numel() == 1 && loss.needs_grad());
  TG_CHECK(mode_ != TapeMode::Planning);
  if (mode_ == TapeMode::Planned) {
    const MemoryPlan& p = *plan_;
    TG_CHECK(p.entries == static_cast<int64_t>(entries_.size()));
    const size_t n = entries_.size();
    for (int32_t z = p.zero_begin[n]; z < p.zero_begin[n + 1]; ++z)
      zero_floats(base_ + p.offset[p.zero[z]], p.floats[p.zero[z]]);
  }
  loss.grad[0] += seed;  // on a zeroed gradient: = seed
  run_backward(after_entry);
}

void Tape::replay_backward(const std::function<void(size_t)>& after_entry) {
  TG_CHECK(mode_ == TapeMode::Eager);  // the caller seeded gradients the tape hands out zeroed
  run_backward(after_entry);
}

void Tape::run_backward(const std::function<void(size_t)>& after_entry) {
  const MemoryPlan* p = mode_ == TapeMode::Planned ? plan_ : nullptr;
  for (size_t i = entries_.size(); i-- > 0;) {
    if (p) {
      // Note [Memory planner]: recomputed outputs, then fresh gradients.
      for (int32_t r = p->rerun_begin[i]; r < p->rerun_begin[i + 1]; ++r) {
        const TapeEntry& again = entries_[static_cast<size_t>(p->rerun[r])];
        again.forward(again.record);
      }
      for (int32_t z = p->zero_begin[i]; z < p->zero_begin[i + 1]; ++z)
        zero_floats(base_ + p->offset[p->zero[z]], p->floats[p->zero[z]]);
    }
    const TapeEntry& e = entries_[i];
    e.backward(e.record);
    if (after_entry) after_entry(i);
  }
}

}  // namespace autograd
