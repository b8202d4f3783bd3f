// Gradient buckets for the overlapped all-reduce (see grad_buckets.h).
#include "train/distributed/grad_buckets.h"

#include <map>

namespace train {

GradBuckets::GradBuckets(const nn::ParameterStore& store, int64_t shard_slice) : shard_slice_(shard_slice) {
  std::map<std::pair<int64_t, int>, Bucket> by_part;  // (layer, part): the embeddings (-1, 0) first
  for (const nn::ParamInfo& p : store.table) {
    Bucket& b = by_part[{p.layer, nn::param_part(p.role)}];
    b.layer = p.layer;
    b.part = nn::param_part(p.role);
    std::vector<Range>& r = b.ranges;
    if (!r.empty() && r.back().end == p.offset) r.back().end += p.numel;  // merge neighbours
    else r.push_back({p.offset, p.offset + p.numel});
  }
  for (auto& kv : by_part) buckets_.push_back(std::move(kv.second));
}

void GradBuckets::plan(const autograd::Tape& tape) {
  // A part's parameters are final once the first entry of that part (as
  // the model marked it) has run its backward. Entry 0 ends the pass, which
  // sends the embeddings, and any part the tape did not mark.
  for (Bucket& b : buckets_) {
    b.ready_at = 0;
    for (const autograd::TapeBlock& block : tape.blocks())
      if (block.layer == b.layer && block.part == b.part && block.end > block.begin) b.ready_at = block.begin;
  }
}

void GradBuckets::entry_done(size_t i, Distributed& dist, float* grads) {
  // Buckets whose earliest reader is entry i are final now; entry 0 closes
  // the pass, so buckets no entry reads are sent then too.
  for (const Bucket& b : buckets_)
    if (b.ready_at == i)
      for (const Range& r : b.ranges) {
        if (shard_slice_ > 0) dist.start_reduce_scatter(grads, r.begin, r.end, shard_slice_);
        else dist.start_sum(grads + r.begin, r.end - r.begin);
      }
  dist.progress();
}

}  // namespace train
