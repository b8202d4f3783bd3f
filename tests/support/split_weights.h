// Weights kept as a bf16 run's parameter store keeps them (Note [Split
// master weights] in autograd/kernels/split_master.h): side by side in one
// buffer whose floats are split in place into the bf16 copies, then the low
// halves. A view names its weight's place there, and an op whose context
// carries bf16_run() finds the copy (Note [Run precision] in
// autograd/precision.h).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "autograd/kernels/split_master.h"
#include "autograd/precision.h"

namespace testing {

class SplitWeights {
 public:
  // Each weight's float32 values, in order; split at once.
  explicit SplitWeights(std::initializer_list<const std::vector<float>*> weights) {
    for (const std::vector<float>* w : weights) {
      offsets_.push_back(static_cast<int64_t>(buf_.size()));
      buf_.insert(buf_.end(), w->begin(), w->end());
    }
    kernels::split_master_in_place(buf_.data(), n());
  }
  SplitWeights(const SplitWeights&) = delete;
  SplitWeights& operator=(const SplitWeights&) = delete;

  // The i-th weight (its gradient at grad, or none).
  autograd::Tensor view(size_t i, float* grad, std::initializer_list<int64_t> shape) {
    return autograd::tensor_view(buf_.data() + offsets_[i], grad, shape);
  }
  // A bf16 run's precision over these weights.
  autograd::RunPrecision bf16_run() const { return autograd::RunPrecision{autograd::Precision::Bf16, autograd::SplitMasters{buf_.data(), n()}}; }

 private:
  int64_t n() const { return static_cast<int64_t>(buf_.size()); }
  std::vector<float> buf_;
  std::vector<int64_t> offsets_;
};

}  // namespace testing
