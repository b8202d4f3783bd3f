// OptimizerShard: --shard-optimizer under mpirun (ZeRO stage 1, Note
// [Sharded optimizer state]): each rank keeps AdamW's moments for, and
// updates, one contiguous slice of the flat parameters, then the ranks
// gather each other's updated slices.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/buffer.h"
#include "nn/params.h"
#include "train/distributed/distributed.h"
#include "train/optimizer.h"

namespace train {

// Note [Sharded optimizer state]: with N ranks, rank r owns the elements
// [r·S, min((r+1)·S, total)) of every flat buffer, S = ceil(total/N)
// rounded up to whole chunks of the gradient norm's sum (sum_squares_chunk
// in kernels.h). Its m and v hold that slice only: with N = 2 each rank
// keeps half of the moments (GPT-2 small: 472 MiB of 944). In a step:
// - the gradients are reduce-scattered instead of all-reduced, bucket by
//   bucket during the backward as before (Note [All-reduce overlap]): each
//   rank receives the sum of its own slice only, half the bytes of an
//   all-reduce at N = 2 (a ring all-reduce is a reduce-scatter followed by
//   an all-gather; here the all-gather moves the updated weights instead);
// - the global norm: each rank sums the squares of its own chunks, the ranks
//   exchange those partials, and every rank adds all of them in chunk order,
//   the very additions sum_squares makes over the whole summed gradient;
// - each rank runs AdamW over its slice (elementwise: every element gets
//   the bits the unsharded update gives it) and zeroes all its gradients;
// - an all-gather gives every rank the others' updated slices.
// At two ranks an element's sum is a + b either way, so a sharded run is
// bit-identical to the unsharded one (tests/distributed); at more ranks the
// ring adds the ranks' gradients in another order for the reduce-scatter
// (parts: the slices) than for the all-reduce (parts: 1/N of each bucket;
// Note [Ring sums]). A checkpoint stays one file with whole moments: rank 0
// gathers m, writes it, then gathers v into the same buffer (its gradient
// buffer, zero between steps) and writes that (checkpoints::MomentSource),
// so it never holds more than one whole moment. A loaded one is cut to the
// slice. So any N, sharded or not, resumes any other.
class OptimizerShard {
 public:
  // Takes this rank's slice of store.m and store.v when they are whole (a
  // resumed run) and frees them; else starts from zero moments.
  OptimizerShard(Distributed& dist, nn::ParameterStore& store);

  int64_t begin() const { return begin_; }
  int64_t end() const { return end_; }
  int64_t shard_floats() const { return shard_; }

  // The global gradient norm once this rank's slice holds the summed
  // gradient: the same bits as train::grad_norm over the whole sum.
  double grad_norm(const nn::ParameterStore& store);

  // AdamW over this rank's slice (reading each gradient times grad_scale),
  // every gradient left zero, then the all-gather of the parameters.
  void update(nn::ParameterStore& store, const AdamWConfig& cfg, float lr, int64_t step, float grad_scale);

  // Between steps (every gradient zero), every rank calls it with the same
  // `which`, m (0) then v (1): rank 0 gets the whole moment, gathered into
  // its gradient buffer (the others get null). Then release_moments on rank
  // 0 zeroes the gradients again.
  const float* gather_moment(nn::ParameterStore& store, int which);
  void release_moments(nn::ParameterStore& store);

  // A checksum of this rank's moments (each rank's differ by design).
  uint64_t moments_checksum() const;

 private:
  Distributed& dist_;
  int64_t shard_ = 0, begin_ = 0, end_ = 0;
  autograd::FloatBuffer m_, v_;  // [end - begin]
  std::vector<double> norm_partials_;  // every chunk's Σg², this rank's filled in
};

}  // namespace train
