// What every op file shares: fresh outputs and saved buffers (from the tape
// when the op records, else from the arena), running and recording a record,
// and small shape helpers. Private to autograd/ops/.
#pragma once

#include <cstdint>

#include "autograd/ops.h"

namespace autograd {

// Whether an op records: a tape, and some input that needs a gradient.
inline bool records(const OpContext& ctx, const Tensor& a, const Tensor& b = Tensor{},
                    const Tensor& c = Tensor{}) {
  return ctx.tape != nullptr && (a.needs_grad() || b.needs_grad() || c.needs_grad());
}

// A fresh output with `like`'s leading shape and last dimension `last`. A
// recorded op's output is a tensor of the tape, which places its data and its
// gradient (Note [Tape modes]); otherwise its data comes from the arena and it
// has no gradient.
inline Tensor new_output(const OpContext& ctx, const Tensor& like, int64_t last, bool record) {
  Tensor out = like;
  out.shape[out.ndim - 1] = last;
  out.grad = nullptr;
  out.id = -1;
  if (record) ctx.tape->new_tensor(*ctx.arena, out);
  else out.data = ctx.arena->alloc(out.numel());
  return out;
}

// n floats the op's backward reads (e.g. LayerNorm's saved mean).
inline float* new_saved(const OpContext& ctx, int64_t n, bool record) {
  return record ? ctx.tape->new_buffer(*ctx.arena, n, BufferRole::Saved) : ctx.arena->alloc(n);
}
// n floats only the op's forward uses.
inline float* new_scratch(const OpContext& ctx, int64_t n, bool record) {
  return record ? ctx.tape->new_buffer(*ctx.arena, n, BufferRole::Scratch) : ctx.arena->alloc(n);
}
// n floats only the op's backward uses; only a recording op has a backward.
// `reuse` asks the planner for floats shared with a buffer still alive
// (Note [Buffer reuse] in planner.h); it may or may not grant them.
inline float* new_backward_scratch(const OpContext& ctx, int64_t n, Reuse reuse = Reuse::None) {
  return ctx.tape->new_buffer(*ctx.arena, n, BufferRole::BackwardScratch, reuse);
}
// Room in float buffers for n bf16 values (two to a float), and such a
// buffer seen as bf16 values.
inline int64_t floats_for_bf16(int64_t n) { return (n + 1) / 2; }
inline uint16_t* as_bf16(float* floats) { return reinterpret_cast<uint16_t*>(floats); }

// Runs r's forward kernel, except on a tape that is only being planned
// (Note [Tape modes]), and records r as the entry that made `out` with what
// it read and saves (`uses`, Note [Tape entries]), when the op records.
template <class Record>
void run_op(const OpContext& ctx, const Record& r, bool record, const Tensor& out,
            const EntryUses& uses) {
  if (!ctx.tape || ctx.tape->runs_kernels()) r.forward();
  if (record) ctx.tape->record(r, out, uses);
}

// Rows of a tensor seen as [rows, last dimension].
inline int64_t rows(const Tensor& t) { return t.numel() / t.shape[t.ndim - 1]; }

}  // namespace autograd
