// Tensor: a non-owning view of contiguous float32 storage with a shape, and
// the place its gradient accumulates (null when no gradient is needed), and
// its id on the tape that recorded it.
// Storage is owned elsewhere: parameters by nn::ParameterStore, activations
// by an Arena that is reset every step.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>

#include "autograd/base/check.h"
#include "autograd/kernels/split_master.h"

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
  // A bf16 copy of the values kept up to date by their owner, or null. A
  // weight that has one is multiplied in bf16 (Note [bf16 matmuls] in
  // kernels/bf16.h): parameters get copies in a bf16 run
  // (nn::gpt_set_precision), so the precision is chosen once per run and no
  // call site branches on it.
  const uint16_t* bf16 = nullptr;
  // With bf16, a weight whose float32 master is split (Note [Split master
  // weights] in kernels/split_master.h): data is null, and the master is
  // kernels::join_master(bf16[i], master_lo[i]).
  const uint16_t* master_lo = nullptr;
  // An activation PyTorch's autocast would hand on in bf16: set on the
  // output of a linear with bf16 operands (and carried through RoPE). The
  // attention op then reads its v rounded to bf16, and keeps that for
  // backward (Note [bf16 attention inputs] in ops/attention.cpp).
  bool autocast_bf16 = false;

  int64_t size(int dim) const { return shape[dim]; }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    return n;
  }
  bool needs_grad() const { return grad != nullptr; }
  bool defined() const { return data != nullptr || bf16 != nullptr; }
};

// t's float32 values, read from its split master when it has one.
inline kernels::MasterValues master_values(const Tensor& t) {
  if (t.master_lo) return kernels::MasterValues{nullptr, t.bf16, t.master_lo};
  return kernels::MasterValues{t.data};
}

inline Tensor tensor_view(float* data, float* grad, std::initializer_list<int64_t> shape) {
  TG_CHECK(shape.size() >= 1 && shape.size() <= 4);
  Tensor t;
  t.data = data;
  t.grad = grad;
  for (int64_t d : shape) t.shape[t.ndim++] = d;
  return t;
}

}  // namespace autograd
