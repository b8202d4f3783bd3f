// OptimizerShard: --shard-optimizer under mpirun (ZeRO stage 1, Note
// [Sharded optimizer state]): each rank keeps AdamW's moments for, and
// updates, one contiguous slice of the flat parameters, then the ranks
// gather each other's updated slices.
#pragma once

#include <cstdint>

#include "autograd/buffer.h"
#include "nn/params.h"
#include "train/distributed.h"
#include "train/optimizer.h"

namespace train {

// Note [Sharded optimizer state]: with N ranks, rank r owns the elements
// [r·S, min((r+1)·S, total)) of every flat buffer, S = ceil(total/N) rounded
// up to 16 floats (whole SIMD lanes and cache lines). Its m and v hold that
// slice only: with N = 2 each rank keeps half of the moments (GPT-2 small:
// 472 MiB of 944). A step is otherwise the unsharded one: the gradients are
// all-reduced as before (bucketed during the backward, Note [All-reduce
// overlap]), so every rank holds the whole summed gradient and measures the
// global norm exactly as one unsharded rank does; each rank then runs AdamW
// over its slice (the kernel is elementwise, so every element gets the bits
// the unsharded update gives it), zeroes the rest of its gradients, and an
// all-gather gives every rank the others' updated slices. So a sharded run
// is bit-identical to the unsharded run at the same N. (A reduce-scatter
// would send half the gradient bytes, but the norm would then be summed from
// per-rank partials in another order: other bits.) A checkpoint stays one
// file with whole moments: rank 0 gathers them to save (m into its gradient
// buffer, zero between steps, so only v is a new whole buffer) and frees
// them after; a loaded one is cut to the slice. So any N, sharded or
// not, resumes any other.
class OptimizerShard {
 public:
  // Takes this rank's slice of store.m and store.v when they are whole (a
  // resumed run) and frees them; else starts from zero moments.
  OptimizerShard(Distributed& dist, nn::ParameterStore& store);

  int64_t begin() const { return begin_; }
  int64_t end() const { return end_; }
  int64_t shard_floats() const { return shard_; }

  // AdamW over this rank's slice (reading each gradient times grad_scale),
  // every gradient left zero, then the all-gather of the parameters.
  void update(nn::ParameterStore& store, const AdamWConfig& cfg, float lr, int64_t step, float grad_scale);

  // Between steps (every gradient zero), every rank calls both together.
  // gather_moments: rank 0's store.m and store.v become the whole moments,
  // store.m in the gradient buffer it borrows (the others' stay empty);
  // release_moments: rank 0 gives the buffer back to the gradients, zeroed,
  // and frees v.
  void gather_moments(nn::ParameterStore& store);
  void release_moments(nn::ParameterStore& store);

  // A checksum of this rank's moments (each rank's differ by design).
  uint64_t moments_checksum() const;

 private:
  Distributed& dist_;
  int64_t shard_ = 0, begin_ = 0, end_ = 0;
  autograd::FloatBuffer m_, v_;  // [end - begin]
};

}  // namespace train
