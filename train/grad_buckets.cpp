// Gradient buckets for the overlapped all-reduce (see grad_buckets.h).
#include "train/grad_buckets.h"

#include <cstdint>
#include <map>
#include <string>

namespace train {

namespace {

// "transformer.h.3.mlp.c_fc.weight" → 3; anything outside the blocks → -1.
int block_of(const std::string& name) {
  const std::string prefix = "transformer.h.";
  if (name.compare(0, prefix.size(), prefix) != 0) return -1;
  return std::stoi(name.substr(prefix.size()));
}

}  // namespace

GradBuckets::GradBuckets(const nn::ParameterStore& store) {
  std::map<int, Bucket> by_block;  // -1 (the rest) first
  for (const nn::ParamInfo& p : store.table) {
    std::vector<Range>& r = by_block[block_of(p.name)].ranges;
    if (!r.empty() && r.back().end == p.offset) r.back().end += p.numel;  // merge neighbours
    else r.push_back({p.offset, p.offset + p.numel});
  }
  for (auto& kv : by_block) buckets_.push_back(std::move(kv.second));
}

void GradBuckets::plan(const autograd::Tape& tape, const float* grads) {
  const auto base = reinterpret_cast<uintptr_t>(grads);
  for (Bucket& b : buckets_) {
    b.ready_at = 0;  // read by no entry: sent when the pass ends
    bool found = false;
    for (size_t i = 0; i < tape.size() && !found; ++i) {
      for (const autograd::Tensor& t : tape[i].in) {
        if (!t.grad) continue;
        // An element offset into the flat buffer (activation gradients lie elsewhere).
        const auto bytes = reinterpret_cast<uintptr_t>(t.grad) - base;
        const auto at = static_cast<int64_t>(bytes / sizeof(float));
        if (reinterpret_cast<uintptr_t>(t.grad) < base) continue;
        for (const Range& r : b.ranges)
          if (at >= r.begin && at < r.end) found = true;
      }
      if (found) b.ready_at = i;
    }
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
