// What every op file shares: fresh outputs from the arena, their gradients
// placed as the caller asks, recording, and small shape helpers. Private to
// autograd/ops/.
#pragma once

#include <cstdint>

#include "autograd/ops.h"

namespace autograd {

// Whether an input needs a gradient. An input whose gradient lies over its
// data takes a consumer that writes it rather than adds to it (Note
// [Gradient liveness]): only cross_entropy does, so every other op refuses
// such an input.
inline bool needs_grad_added(const Tensor& t) {
  TG_CHECK(!t.needs_grad() || t.grad != t.data);
  return t.needs_grad();
}

inline bool any_needs_grad(const Tensor& a, const Tensor& b = Tensor{},
                           const Tensor& c = Tensor{}) {
  const bool na = needs_grad_added(a), nb = needs_grad_added(b), nc = needs_grad_added(c);
  return na || nb || nc;
}

// A fresh output with `like`'s leading shape and last dimension `last`, its
// data in ctx.data when the caller gives scratch storage (Note [Scratch
// activations]). Its gradient exists only when it will be recorded on the
// tape, where ctx.grad places it (Note [Gradient liveness]); a buffer of its
// own starts zeroed, for accumulation.
inline Tensor new_output(const OpContext& ctx, const Tensor& like, int64_t last, bool record) {
  Tensor out = like;
  out.shape[out.ndim - 1] = last;
  const int64_t n = out.numel();
  out.data = ctx.data ? ctx.data : ctx.arena->alloc(n);
  out.grad = nullptr;
  if (!record) return out;
  switch (ctx.grad.kind) {
    case GradPlacement::Kind::Own: out.grad = ctx.arena->alloc_zeroed(n); break;
    case GradPlacement::Kind::Shared: out.grad = ctx.grad.buffer; break;
    case GradPlacement::Kind::OverData: out.grad = out.data; break;
  }
  TG_CHECK(out.grad);
  return out;
}

// Records r, the backward of the op that produced `out`; a gradient in
// shared storage is zeroed once r's backward has read it.
template <class Record>
void record_op(const OpContext& ctx, const Record& r, const Tensor& out) {
  const bool shared = ctx.grad.kind == GradPlacement::Kind::Shared;
  ctx.tape->record(r, shared ? out.grad : nullptr, out.numel());
}

// Rows of a tensor seen as [rows, last dimension].
inline int64_t rows(const Tensor& t) { return t.numel() / t.shape[t.ndim - 1]; }

}  // namespace autograd
