// RunPrecision: the precision a run's ops compute in, which each op learns
// from its context (OpContext::precision), and where a bf16 run's weights
// keep their bf16 copies.
//
// Note [Run precision]
// Precision is the run's, not the model's nor a tensor's (principle 14; as
// PyTorch's autocast decides per op, not per model line). The command picks
// it once (train/precision.h), the parameter store takes it in (a bf16 run
// splits the store's 2-D masters, Note [Split master weights]), and every
// forward over the store passes it in its OpContext (nn::run_precision):
// the model code hands the context on and never asks. In a bf16 run
// - linear multiplies x and its weight in bf16 (Note [bf16 linear] in
//   ops/linear.cpp); the weight's copy is the high plane of its split
//   master, found from where the weight lies in the store (bf16_copy);
// - attention rounds v to bf16 (Note [bf16 attention inputs] in
//   ops/attention.cpp): its input is a bf16 linear's output, which
//   PyTorch's autocast would hand on in bf16;
// - embedding reads its tables' float32 masters from their two planes
//   (values);
// everything else is float32 either way. A tensor that lies in the split
// masters is named, not read, by its data pointer: its floats are the
// planes' bytes, and only these functions read them.
#pragma once

#include <cstdint>
#include <functional>

#include "autograd/kernels/split_master.h"
#include "autograd/tensor.h"

namespace autograd {

// n float32 masters split in place (kernels::split_master_in_place): the n
// floats from `begin` hold the n bf16 copies, then the n low halves.
struct SplitMasters {
  const float* begin = nullptr;
  int64_t n = 0;

  const uint16_t* hi() const { return reinterpret_cast<const uint16_t*>(begin); }
  const uint16_t* lo() const { return hi() + n; }
  // Whether t's data lies among the masters (std::less: pointers into
  // different buffers compare safely).
  bool holds(const Tensor& t) const {
    const std::less<const float*> before;
    return t.data && begin && !before(t.data, begin) && before(t.data, begin + n);
  }
  bool operator==(const SplitMasters& o) const { return begin == o.begin && n == o.n; }
};

struct RunPrecision {
  bool bf16 = false;     // the matmuls with bf16 operands, attention's v in bf16
  SplitMasters masters;  // a bf16 run's split weights; none in float32

  // weight's bf16 copy in a bf16 run, or null: float32, or a weight not
  // among the split masters.
  const uint16_t* bf16_copy(const Tensor& weight) const {
    return bf16 && masters.holds(weight) ? masters.hi() + (weight.data - masters.begin) : nullptr;
  }
  // t's float32 values, joined from its planes where it is a split master.
  kernels::MasterValues values(const Tensor& t) const {
    if (!masters.holds(t)) return kernels::MasterValues{t.data};
    const int64_t k = t.data - masters.begin;
    return kernels::MasterValues{nullptr, masters.hi() + k, masters.lo() + k};
  }
  bool operator==(const RunPrecision& o) const { return bf16 == o.bf16 && masters == o.masters; }
};

}  // namespace autograd
