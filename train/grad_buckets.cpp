// Gradient buckets for the overlapped all-reduce (see grad_buckets.h).
#include "train/grad_buckets.h"

#include <cstring>
#include <map>

namespace train {

GradBuckets::GradBuckets(const nn::ParameterStore& store) {
  std::map<int64_t, Bucket> by_block;  // -1 (outside the blocks) first
  for (const nn::ParamInfo& p : store.table) {
    std::vector<Range>& r = by_block[p.layer].ranges;
    if (!r.empty() && r.back().end == p.offset) r.back().end += p.numel;  // merge neighbours
    else r.push_back({p.offset, p.offset + p.numel});
  }
  for (auto& kv : by_block) buckets_.push_back(std::move(kv.second));
}

void GradBuckets::plan(const autograd::Tape& tape) {
  for (Bucket& b : buckets_) b.ready_at = 0;  // entry 0 ends the pass
  const size_t blocks = buckets_.size() - 1;
  size_t layernorms = 0;
  for (size_t i = 0; i < tape.size(); ++i)
    if (std::strcmp(tape.op_name(i), "layernorm") == 0) ++layernorms;
  if (layernorms != 2 * blocks + 1) return;  // not the GPT forward: no overlap
  size_t seen = 0;
  for (size_t i = 0; i < tape.size(); ++i) {
    if (std::strcmp(tape.op_name(i), "layernorm") != 0) continue;
    if (seen % 2 == 0 && seen / 2 < blocks) buckets_[1 + seen / 2].ready_at = i;  // ln_1 of block seen/2
    ++seen;
  }
}

void GradBuckets::entry_done(size_t i, Distributed& dist, float* grads) {
  // Buckets whose earliest reader is entry i are final now; entry 0 closes
  // the pass, so buckets no entry reads are sent then too.
  for (const Bucket& b : buckets_)
    if (b.ready_at == i)
      for (const Range& r : b.ranges) dist.start_sum(grads + r.begin, r.end - r.begin);
  dist.progress();
}

}  // namespace train
