// The sharded optimizer (see optimizer_shard.h, Note [Sharded optimizer state]).
#include "train/optimizer_shard.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "autograd/base/check.h"
#include "autograd/kernels/kernels.h"

namespace train {

OptimizerShard::OptimizerShard(Distributed& dist, nn::ParameterStore& store) : dist_(dist) {
  const int64_t N = dist.size();
  shard_ = ((store.total + N - 1) / N + 15) / 16 * 16;
  begin_ = std::min(store.total, dist.rank() * shard_);
  end_ = std::min(store.total, begin_ + shard_);
  m_.resize(end_ - begin_);
  v_.resize(end_ - begin_);
  const bool whole = store.m.size() >= store.total && store.v.size() >= store.total;
  if (whole && end_ > begin_) {
    std::memcpy(m_.data(), store.m.data() + begin_, static_cast<size_t>(end_ - begin_) * sizeof(float));
    std::memcpy(v_.data(), store.v.data() + begin_, static_cast<size_t>(end_ - begin_) * sizeof(float));
  }
  store.m.resize(0);
  store.v.resize(0);
}

void OptimizerShard::update(nn::ParameterStore& s, const AdamWConfig& cfg, float lr, int64_t step,
                            float grad_scale) {
  // The decayed prefix [0, n_decay) and the rest, each cut to [begin, end):
  // the same two passes as adamw_update, over this rank's elements.
  const int64_t decay_end = std::min(end_, s.n_decay), rest_begin = std::max(begin_, s.n_decay);
  if (decay_end > begin_)
    kernels::adamw_update(s.params.data() + begin_, m_.data(), v_.data(), s.grads.data() + begin_,
                          decay_end - begin_, lr, cfg.beta1, cfg.beta2, cfg.eps, cfg.weight_decay, step,
                          grad_scale);
  if (end_ > rest_begin)
    kernels::adamw_update(s.params.data() + rest_begin, m_.data() + (rest_begin - begin_),
                          v_.data() + (rest_begin - begin_), s.grads.data() + rest_begin, end_ - rest_begin, lr,
                          cfg.beta1, cfg.beta2, cfg.eps, 0.0f, step, grad_scale);
  // The kernel zeroed this rank's gradients; the next backward adds into all.
  std::memset(s.grads.data(), 0, static_cast<size_t>(begin_) * sizeof(float));
  std::memset(s.grads.data() + end_, 0, static_cast<size_t>(s.total - end_) * sizeof(float));
  dist_.all_gather_slices(s.params.data(), shard_, s.total);
}

void OptimizerShard::gather_moments(nn::ParameterStore& store) {
  if (dist_.root()) {
    // Between steps every gradient is zero (the update left them so): rank 0
    // lends its gradient buffer to m rather than allocate a third whole
    // buffer, and release_moments gives it back, zeroed. The buffer moves
    // by pointer, so the model's views of the gradients stay valid.
    std::swap(store.m, store.grads);
    store.v.resize(store.total);
  }
  dist_.gather_slices(m_.data(), store.m.data(), shard_, store.total);
  dist_.gather_slices(v_.data(), store.v.data(), shard_, store.total);
}

void OptimizerShard::release_moments(nn::ParameterStore& store) {
  if (!dist_.root()) return;
  std::swap(store.m, store.grads);
  store.grads.zero();
  store.m.resize(0);
  store.v.resize(0);
}

uint64_t OptimizerShard::moments_checksum() const {
  return checksum_floats(v_.data(), v_.size(), checksum_floats(m_.data(), m_.size()));
}

}  // namespace train
