// Precision: the one form a run's precision takes, from the parsed flag
// (train/precision.h) through the parameter store (nn::set_precision) to
// the ops; RunPrecision: that precision as each op learns it from its
// context (OpContext::precision), with where a bf16 run's weights keep
// their bf16 copies.
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

// The precision of a run's matmuls (Note [bf16 linear] in ops/linear.cpp)
// and of attention's v (Note [bf16 attention inputs] in ops/attention.cpp);
// everything else is float32 either way.
enum class Precision { Fp32, Bf16 };
inline const char* precision_name(Precision p) { return p == Precision::Bf16 ? "bf16" : "fp32"; }

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
  Precision precision = Precision::Fp32;
  SplitMasters masters;  // a bf16 run's split weights; none in float32

  // The matmuls with bf16 operands, attention's v in bf16.
  bool bf16() const { return precision == Precision::Bf16; }

  // weight's bf16 copy in a bf16 run, or null: float32, or a weight not
  // among the split masters.
  const uint16_t* bf16_copy(const Tensor& weight) const {
    return bf16() && masters.holds(weight) ? masters.hi() + (weight.data - masters.begin) : nullptr;
  }
  // t's float32 values, joined from its planes where it is a split master.
  kernels::MasterValues values(const Tensor& t) const {
    if (!masters.holds(t)) return kernels::MasterValues{t.data};
    const int64_t k = t.data - masters.begin;
    return kernels::MasterValues{nullptr, masters.hi() + k, masters.lo() + k};
  }
  bool operator==(const RunPrecision& o) const { return precision == o.precision && masters == o.masters; }
};

}  // namespace autograd
