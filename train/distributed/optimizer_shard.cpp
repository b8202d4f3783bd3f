// The sharded optimizer (see optimizer_shard.h, Note [Sharded optimizer state]).
#include "train/distributed/optimizer_shard.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "autograd/base/check.h"
#include "autograd/kernels/kernels.h"

namespace train {

OptimizerShard::OptimizerShard(Distributed& dist, nn::ParameterStore& store) : dist_(dist) {
  const int64_t N = dist.size(), chunk = kernels::sum_squares_chunk(store.total);
  shard_ = ((store.total + N - 1) / N + chunk - 1) / chunk * chunk;
  norm_partials_.resize(static_cast<size_t>((store.total + chunk - 1) / chunk));
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

double OptimizerShard::grad_norm(const nn::ParameterStore& s) {
  const int64_t chunk = kernels::sum_squares_chunk(s.total), per_rank = shard_ / chunk;
  const int64_t n_chunks = static_cast<int64_t>(norm_partials_.size());
  const int64_t first = std::min(n_chunks, dist_.rank() * per_rank), last = std::min(n_chunks, first + per_rank);
  kernels::sum_squares_partials(norm_partials_.data() + first, s.grads.data(), s.total, first, last);
  dist_.all_gather_slices(norm_partials_.data(), per_rank, n_chunks);
  double total = 0.0;
  for (double p : norm_partials_) total += p;  // chunk order, as kernels::sum_squares
  return std::sqrt(total);
}

void OptimizerShard::update(nn::ParameterStore& s, const AdamWConfig& cfg, float lr, int64_t step,
                            float grad_scale) {
  // The decayed prefix [0, n_decay) and the rest, each cut to [begin, end):
  // the same two passes as adamw_update, over this rank's elements.
  const int64_t decay_end = std::min(end_, s.n_decay), rest_begin = std::max(begin_, s.n_decay);
  if (decay_end > begin_)
    adamw_update_range(s, begin_, decay_end - begin_, m_.data(), v_.data(), cfg, lr, cfg.weight_decay, step,
                       grad_scale);
  if (end_ > rest_begin)
    adamw_update_range(s, rest_begin, end_ - rest_begin, m_.data() + (rest_begin - begin_),
                       v_.data() + (rest_begin - begin_), cfg, lr, 0.0f, step, grad_scale);
  // The kernel zeroed this rank's gradients; the next backward adds into all.
  std::memset(s.grads.data(), 0, static_cast<size_t>(begin_) * sizeof(float));
  std::memset(s.grads.data() + end_, 0, static_cast<size_t>(s.total - end_) * sizeof(float));
  if (s.precision() == autograd::Precision::Bf16) {  // each plane of the split prefix, then the floats
    dist_.all_gather_slices(s.values.hi(), shard_, s.n_decay);
    dist_.all_gather_slices(s.values.lo(), shard_, s.n_decay);
    dist_.all_gather_slices(s.values.vectors(), shard_, s.n_decay, s.total);
  } else {
    dist_.all_gather_slices(s.values.floats(), shard_, s.total);
  }
}

const float* OptimizerShard::gather_moment(nn::ParameterStore& store, int which) {
  // Between steps every gradient is zero (the update left them so): rank 0
  // gathers into its gradient buffer rather than allocate a whole one, and
  // release_moments zeroes it again.
  float* whole = dist_.root() ? store.grads.data() : nullptr;
  dist_.gather_slices(which == 0 ? m_.data() : v_.data(), whole, shard_, store.total);
  return whole;
}

void OptimizerShard::release_moments(nn::ParameterStore& store) {
  if (dist_.root()) store.grads.zero();
}

uint64_t OptimizerShard::moments_checksum() const {
  return checksum_floats(v_.data(), v_.size(), checksum_floats(m_.data(), m_.size()));
}

}  // namespace train
