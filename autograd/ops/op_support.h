// What every op file shares: fresh outputs from the arena and small shape
// helpers. Private to autograd/ops/.
#pragma once

#include <cstdint>

#include "autograd/ops.h"

namespace autograd {

inline bool any_needs_grad(const Tensor& a, const Tensor& b = Tensor{},
                           const Tensor& c = Tensor{}) {
  return a.needs_grad() || b.needs_grad() || c.needs_grad();
}

// A fresh output with `like`'s leading shape and last dimension `last`. Its
// gradient buffer (zeroed, for accumulation) exists only when it will be
// recorded on the tape.
inline Tensor new_output(OpContext& ctx, const Tensor& like, int64_t last, bool record) {
  Tensor out = like;
  out.shape[out.ndim - 1] = last;
  const int64_t n = out.numel();
  out.data = ctx.arena->alloc(n);
  out.grad = record ? ctx.arena->alloc_zeroed(n) : nullptr;
  return out;
}

// Rows of a tensor seen as [rows, last dimension].
inline int64_t rows(const Tensor& t) { return t.numel() / t.shape[t.ndim - 1]; }

}  // namespace autograd
