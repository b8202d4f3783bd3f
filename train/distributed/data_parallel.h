// DataParallelReducer: what data-parallel training (Note [Data parallelism]
// in distributed.h) plugs into the training step's seam (Note [Gradient
// all-reduce seam] in train_step.h): this process's share of the K
// micro-batches, the bucketed sums started during the last backward (Note
// [All-reduce overlap] in grad_buckets.h) or one sum after it, and the loss
// summed across processes.
#pragma once

#include <cstdint>
#include <functional>

#include "train/distributed/distributed.h"
#include "train/distributed/grad_buckets.h"
#include "train/train_step.h"

namespace train {

class DataParallelReducer : public GradientReducer {
 public:
  // overlap: start each bucket's sum as soon as backward has finished it
  // (--no-overlap: one sum after the backward; the same result).
  // shard_slice > 0: the optimizer state is sharded in slices of that many
  // floats, so each rank receives only its slice's sum (a reduce-scatter;
  // Note [Sharded optimizer state]).
  DataParallelReducer(Distributed& dist, nn::ParameterStore& store, bool overlap, int64_t shard_slice = 0);

  bool runs_micro_batch(int64_t k, int64_t K) const override {
    return owns_micro_batch(k, K, dist_.rank(), dist_.size());
  }
  const std::function<void(size_t)>* during_last_backward(const autograd::Tape& tape) override;
  void reduce(nn::ParameterStore& store) override;
  double reduce_loss(double local_loss_sum) override;

  // After a step whose loss or gradient norm was not finite (every process
  // sees the same global values, so all call this together): the first rank
  // whose own loss was not finite, or size() when none was.
  int first_nonfinite_rank();

 private:
  Distributed& dist_;
  bool overlap_;
  int64_t shard_slice_;
  GradBuckets buckets_;
  std::function<void(size_t)> after_entry_;
  double local_loss_sum_ = 0.0;
};

}  // namespace train
