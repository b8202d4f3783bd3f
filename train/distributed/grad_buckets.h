// Gradient buckets: the parameter gradients in groups of about one
// transformer block, each summed across ranks as soon as the backward pass
// has finished it (Note [All-reduce overlap]).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "autograd/tape.h"
#include "nn/params.h"
#include "train/distributed/distributed.h"

namespace train {

// Note [All-reduce overlap]: on each rank's last micro-batch of a step, the
// backward pass walks the tape from the loss back to the embeddings, so block
// L-1's gradients are final long before block 0's. A bucket holds the
// tensors of one part of the model (Note [Block parts] in nn/params.h): each
// block's attention half and MLP half, the head (ln_f, an untied lm_head),
// and the embeddings (wte, tied to lm_head, and wpe). It is final once the
// backward has run the first tape entry of its part, as the model marked it
// on the tape (autograd::BlockMark, TapeBlock), and the embeddings' at entry
// 0. Its sum across ranks (a ring, Note [Ring sums]) starts right then, while the
// backward goes on below, and the optimizer waits for all of them
// (Distributed::wait_sums). Last computed, first sent, as PyTorch DDP and
// llm.c do. Half blocks, not whole ones: what is still unsent when the
// backward ends is exposed, and block 0's MLP half is final before its
// attention half has run. With two ranks each element is a + b either way,
// so the run is bit-identical to the blocking sum; `--no-overlap` keeps the
// latter.
class GradBuckets {
 public:
  // shard_slice > 0: each bucket is reduce-scattered to the ranks' slices
  // of that many floats (Note [Sharded optimizer state]), else all-reduced.
  explicit GradBuckets(const nn::ParameterStore& store, int64_t shard_slice = 0);

  // Before the backward pass: reads the tape's block marks for the entry
  // after which each bucket is final; a bucket of a block the tape did not
  // mark is sent at the end. No heap allocation.
  void plan(const autograd::Tape& tape);
  // Called after tape entry i's backward: starts the buckets it completed
  // and lets MPI progress the ones already started.
  void entry_done(size_t i, Distributed& dist, float* grads);
  size_t buckets() const { return buckets_.size(); }
  size_t ready_at(size_t bucket) const { return buckets_[bucket].ready_at; }
  int64_t elements() const {  // over all buckets: every gradient once
    int64_t n = 0;
    for (const Bucket& b : buckets_)
      for (const Range& r : b.ranges) n += r.end - r.begin;
    return n;
  }

 private:
  struct Range {
    int64_t begin, end;  // elements of the flat gradient buffer
  };
  struct Bucket {
    int64_t layer = -1;         // Note [Block parts] in nn/params.h
    int part = 0;
    std::vector<Range> ranges;  // contiguous runs of its tensors
    size_t ready_at = 0;        // tape index after which it is final
  };
  std::vector<Bucket> buckets_;  // by (layer, part): embeddings, head, block 0's halves, 1's, ...
  int64_t shard_slice_ = 0;
};

}  // namespace train
