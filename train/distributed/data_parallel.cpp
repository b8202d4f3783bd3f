// The data-parallel side of the training step (see data_parallel.h).
#include "train/distributed/data_parallel.h"

#include <cmath>

namespace train {

DataParallelReducer::DataParallelReducer(Distributed& dist, nn::ParameterStore& store, bool overlap,
                                         int64_t shard_slice)
    : dist_(dist),
      overlap_(overlap),
      shard_slice_(shard_slice),
      buckets_(store, shard_slice),
      after_entry_([this, &store](size_t i) { buckets_.entry_done(i, dist_, store.grads.data()); }) {}

const std::function<void(size_t)>* DataParallelReducer::during_last_backward(const autograd::Tape& tape) {
  if (!overlap_) return nullptr;
  buckets_.plan(tape);
  return &after_entry_;
}

void DataParallelReducer::reduce(nn::ParameterStore& store) {
  if (overlap_) {
    dist_.wait_sums();
  } else if (shard_slice_ > 0) {
    dist_.start_reduce_scatter(store.grads.data(), 0, store.total, shard_slice_);
    dist_.wait_sums();
  } else {
    dist_.sum_in_place(store.grads.data(), store.total);
  }
}

double DataParallelReducer::reduce_loss(double local_loss_sum) {
  local_loss_sum_ = local_loss_sum;
  return dist_.sum(local_loss_sum);
}

int DataParallelReducer::first_nonfinite_rank() { return dist_.first_rank_with(!std::isfinite(local_loss_sum_)); }

}  // namespace train
