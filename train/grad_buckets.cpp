// Gradient buckets for the overlapped all-reduce (see grad_buckets.h).
#include "train/grad_buckets.h"

#include <map>

namespace train {

GradBuckets::GradBuckets(const nn::ParameterStore& store, int64_t shard_slice) : shard_slice_(shard_slice) {
  std::map<int64_t, Bucket> by_block;  // -1 (outside the blocks) first
  for (const nn::ParamInfo& p : store.table) {
    std::vector<Range>& r = by_block[p.layer].ranges;
    if (!r.empty() && r.back().end == p.offset) r.back().end += p.numel;  // merge neighbours
    else r.push_back({p.offset, p.offset + p.numel});
  }
  for (auto& kv : by_block) buckets_.push_back(std::move(kv.second));
}

void GradBuckets::plan(const autograd::Tape& tape) {
  // Bucket 1+l holds block l's parameters: final once the first entry of
  // block l (as the model marked it) has run its backward. Entry 0 ends the
  // pass, which sends the rest (embeddings, ln_f, the head).
  for (Bucket& b : buckets_) b.ready_at = 0;
  for (const autograd::TapeBlock& block : tape.blocks())
    if (block.layer >= 0 && static_cast<size_t>(block.layer) + 1 < buckets_.size() && block.end > block.begin)
      buckets_[static_cast<size_t>(block.layer) + 1].ready_at = block.begin;
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
