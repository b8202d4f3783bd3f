// Tensor: a non-owning view of contiguous float32 storage with a shape, and
// the place its gradient accumulates (null when no gradient is needed), and
// its id on the tape that recorded it.
// Storage is owned elsewhere: parameters by nn::ParameterStore, activations
// by an Arena that is reset every step. How the ops compute on it, and how
// they read a parameter that the run keeps in another form (then `data`
// names its place in the store), is the run's choice, not the tensor's
// (Note [Run precision] in precision.h).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>

#include "autograd/base/check.h"

namespace autograd {

struct Tensor {
  float* data = nullptr;
  float* grad = nullptr;
  std::array<int64_t, 4> shape{};
  int ndim = 0;
  // The tape's id of this tensor when a recorded op made it (Note [Tape
  // entries] in tape.h); -1 for everything else: parameters, inputs, and
  // outputs of untaped ops.
  int32_t id = -1;

  int64_t size(int dim) const { return shape[dim]; }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    return n;
  }
  bool needs_grad() const { return grad != nullptr; }
  bool defined() const { return data != nullptr; }
};

inline Tensor tensor_view(float* data, float* grad, std::initializer_list<int64_t> shape) {
  TG_CHECK(shape.size() >= 1 && shape.size() <= 4);
  Tensor t;
  t.data = data;
  t.grad = grad;
  for (int64_t d : shape) t.shape[t.ndim++] = d;
  return t;
}

}  // namespace autograd
