// The memory planner (Note [Memory planner] in planner.h): lives read off
// the tape, then the largest buffers placed first at the lowest free offset.
#include "autograd/planner.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>

#include "autograd/base/check.h"

namespace autograd {

namespace {

constexpr int64_t kAlignFloats = 16;  // 64 bytes, as the arena's
int64_t round_up(int64_t n) { return (std::max<int64_t>(n, 1) + kAlignFloats - 1) / kAlignFloats * kAlignFloats; }

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// A buffer's life: one range of positions, or two for a recomputed one.
struct Life {
  int64_t first = kNever, last = -1, first2 = kNever, last2 = -1;
  void use(int64_t pos) { first = std::min(first, pos), last = std::max(last, pos); }
  void use2(int64_t pos) { first2 = std::min(first2, pos), last2 = std::max(last2, pos); }
};

bool ranges_overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return a0 <= a1 && b0 <= b1 && a0 <= b1 && b0 <= a1;
}
bool lives_overlap(const Life& a, const Life& b) {
  return ranges_overlap(a.first, a.last, b.first, b.last) ||
         ranges_overlap(a.first, a.last, b.first2, b.last2) ||
         ranges_overlap(a.first2, a.last2, b.first, b.last) ||
         ranges_overlap(a.first2, a.last2, b.first2, b.last2);
}

// Per-entry lists flattened: begin[i] … begin[i+1] in items.
void flatten(const std::vector<std::vector<int32_t>>& lists, std::vector<int32_t>& begin,
             std::vector<int32_t>& items) {
  begin.assign(lists.size() + 1, 0);
  items.clear();
  for (size_t i = 0; i < lists.size(); ++i) {
    begin[i] = static_cast<int32_t>(items.size());
    items.insert(items.end(), lists[i].begin(), lists[i].end());
  }
  begin[lists.size()] = static_cast<int32_t>(items.size());
}

}  // namespace

MemoryPlan plan_memory(const Tape& tape) {
  const std::vector<TapeEntry>& entries = tape.entries();
  const std::vector<TapeTensor>& tensors = tape.tensors();
  const std::vector<TapeBuffer>& buffers = tape.buffers();
  const auto n = static_cast<int64_t>(entries.size());
  // Positions in the step's order.
  auto fwd = [](int64_t i) { return 2 * i; };
  auto bwd = [n](int64_t i) { return 2 * (2 * n - 1 - i); };
  const int64_t backward_start = 2 * n - 1, end = 4 * n;

  // Whose forward reads each tensor, in entry order.
  std::vector<std::vector<int32_t>> readers(tensors.size());
  for (size_t e = 0; e < entries.size(); ++e)
    for (int32_t t : entries[e].inputs)
      if (t >= 0) readers[static_cast<size_t>(t)].push_back(static_cast<int32_t>(e));
  // Whose backward reads each tensor's data (the entries that save it).
  std::vector<std::vector<int32_t>> backward_readers(tensors.size());
  for (size_t e = 0; e < entries.size(); ++e)
    for (int32_t t : entries[e].saved)
      if (t >= 0) backward_readers[static_cast<size_t>(t)].push_back(static_cast<int32_t>(e));
  auto saves_own_output = [&](const TapeEntry& entry) {
    return std::find(entry.saved.begin(), entry.saved.end(), entry.output) != entry.saved.end();
  };
  for (const TapeBuffer& b : buffers) TG_CHECK(b.entry >= 0 && b.entry < n);  // every owner recorded

  MemoryPlan plan;
  plan.entries = n;
  plan.recomputed.assign(entries.size(), false);
  std::vector<int32_t> rerun_at(entries.size(), -1);  // the entry whose backward it precedes
  for (size_t e = 0; e < entries.size(); ++e) {
    const TapeEntry& entry = entries[e];
    if (!entry.recomputable || saves_own_output(entry)) continue;
    bool inputs_kept = true;
    for (int32_t in : entry.inputs)
      if (in >= 0 && plan.recomputed[static_cast<size_t>(tensors[static_cast<size_t>(in)].producer)])
        inputs_kept = false;
    int32_t latest_backward_reader = -1;  // a consumer: the entry itself does not save its output
    for (int32_t r : backward_readers[static_cast<size_t>(entry.output)])
      latest_backward_reader = std::max(latest_backward_reader, r);
    if (inputs_kept && latest_backward_reader >= 0) {
      plan.recomputed[e] = true;
      rerun_at[e] = latest_backward_reader;
    }
  }

  std::vector<Life> life(buffers.size());
  // Granted reuse (Note [Buffer reuse]): the buffer whose floats each lies
  // in, and how far into them.
  std::vector<int32_t> alias(buffers.size(), -1);
  std::vector<int64_t> alias_at(buffers.size(), 0);
  std::vector<std::vector<int32_t>> zero(entries.size() + 1);
  for (size_t t = 0; t < tensors.size(); ++t) {
    const TapeTensor& tensor = tensors[t];
    const auto d = static_cast<size_t>(tensor.data), g = static_cast<size_t>(tensor.grad);
    const int32_t p = tensor.producer;
    const bool recomputed = plan.recomputed[static_cast<size_t>(p)];
    life[d].use(fwd(p));
    if (readers[t].empty()) life[d].use(end);  // the caller reads it (the loss)
    int32_t last_reader = -1;
    bool one_consumer = true;
    for (int32_t r : readers[t]) {
      one_consumer = one_consumer && (last_reader < 0 || r == last_reader);
      last_reader = std::max(last_reader, r);
      life[d].use(fwd(r));
    }
    // Of a recomputed tensor (whose producer does not save it), the
    // backward readers read the rerun's data.
    for (int32_t r : backward_readers[t]) {
      if (recomputed) life[d].use2(bwd(r));
      else life[d].use(bwd(r));
    }
    if (recomputed) life[d].use2(bwd(rerun_at[static_cast<size_t>(p)]) - 1);

    // The gradient: first written by its last reader's backward, read by its
    // producer's; over the data where that is granted (Note [Buffer reuse]).
    const bool over_data = buffers[g].reuse == Reuse::OverData && last_reader >= 0 && one_consumer &&
                           !saves_own_output(entries[static_cast<size_t>(p)]) && !recomputed;
    if (over_data) {
      alias[g] = static_cast<int32_t>(d);
      life[d].use(bwd(last_reader));
      life[d].use(bwd(p));
      life[g].use(bwd(last_reader));
      life[g].use(bwd(p));
    } else if (last_reader >= 0) {
      life[g].use(bwd(last_reader));
      life[g].use(bwd(p));
      zero[static_cast<size_t>(last_reader)].push_back(static_cast<int32_t>(g));
    } else {
      life[g].use(backward_start);
      life[g].use(bwd(p));
      zero[entries.size()].push_back(static_cast<int32_t>(g));
    }
  }
  for (size_t b = 0; b < buffers.size(); ++b) {
    const TapeBuffer& buf = buffers[b];
    if (buf.role == BufferRole::BackwardScratch) {  // never rerun: only forwards are
      life[b].use(bwd(buf.entry));
      if (buf.reuse == Reuse::OutputGradTail) {
        // The tail its entry's backward freed, if the scratch fits there.
        const auto host = static_cast<size_t>(
            tensors[static_cast<size_t>(entries[static_cast<size_t>(buf.entry)].output)].grad);
        const int64_t tail = (buffers[host].floats + 1) / 2;
        if (buf.floats <= buffers[host].floats - tail) {
          TG_CHECK(life[host].first <= life[b].first && life[b].last <= life[host].last);  // alive throughout
          alias[b] = static_cast<int32_t>(host);
          alias_at[b] = tail;
        }
      }
      continue;
    }
    if (buf.role != BufferRole::Saved && buf.role != BufferRole::Scratch) continue;
    life[b].use(fwd(buf.entry));
    if (buf.role == BufferRole::Saved) life[b].use(bwd(buf.entry));
    if (plan.recomputed[static_cast<size_t>(buf.entry)]) {
      const int64_t q = bwd(rerun_at[static_cast<size_t>(buf.entry)]) - 1;
      if (buf.role == BufferRole::Saved) life[b].use(q);
      else life[b].use2(q);
    }
  }
  // A rerun reads its inputs' data again. Index `entries` (before backward
  // starts) stays empty: a rerun precedes some entry's backward.
  std::vector<std::vector<int32_t>> rerun(entries.size() + 1);
  for (size_t e = 0; e < entries.size(); ++e) {
    if (!plan.recomputed[e]) continue;
    rerun[static_cast<size_t>(rerun_at[e])].push_back(static_cast<int32_t>(e));
    const int64_t q = bwd(rerun_at[e]) - 1;
    for (int32_t in : entries[e].inputs)
      if (in >= 0) life[static_cast<size_t>(tensors[static_cast<size_t>(in)].data)].use(q);
  }
  flatten(rerun, plan.rerun_begin, plan.rerun);
  flatten(zero, plan.zero_begin, plan.zero);

  // Placement: largest first (then earliest born, then id: deterministic),
  // each at the lowest offset free through its whole life.
  plan.floats.resize(buffers.size());
  plan.offset.assign(buffers.size(), 0);
  std::vector<size_t> order;
  for (size_t b = 0; b < buffers.size(); ++b) {
    plan.floats[b] = buffers[b].floats;
    plan.unplanned_floats += round_up(buffers[b].floats);
    if (alias[b] < 0) order.push_back(b);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int64_t sa = round_up(buffers[a].floats), sb = round_up(buffers[b].floats);
    if (sa != sb) return sa > sb;
    return life[a].first < life[b].first;
  });
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> taken;  // [offset, end) of placed buffers alive with this one
  for (size_t b : order) {
    const int64_t size = round_up(buffers[b].floats);
    taken.clear();
    for (size_t o : placed)
      if (lives_overlap(life[b], life[o])) taken.push_back({plan.offset[o], plan.offset[o] + round_up(buffers[o].floats)});
    std::sort(taken.begin(), taken.end());
    int64_t at = 0;
    for (const auto& [lo, hi] : taken) {
      if (at + size <= lo) break;
      at = std::max(at, hi);
    }
    plan.offset[b] = at;
    plan.total_floats = std::max(plan.total_floats, at + size);
    placed.push_back(b);
  }
  // A buffer in another's floats, which may lie in a third's (a scratch in
  // a gradient over its data).
  auto offset_of = [&](size_t b, const auto& self) -> int64_t {
    return alias[b] < 0 ? plan.offset[b] : self(static_cast<size_t>(alias[b]), self) + alias_at[b];
  };
  for (size_t b = 0; b < buffers.size(); ++b)
    if (alias[b] >= 0) plan.offset[b] = offset_of(b, offset_of);
  plan.alias = alias;

  plan.first.resize(buffers.size());
  plan.last.resize(buffers.size());
  plan.first2.resize(buffers.size());
  plan.last2.resize(buffers.size());
  for (size_t b = 0; b < buffers.size(); ++b) {
    const Life& l = life[b];
    plan.first[b] = l.first, plan.last[b] = l.last, plan.first2[b] = l.first2, plan.last2[b] = l.last2;
  }
  return plan;
}

namespace {

std::string shape_text(const TapeTensor& t) {
  std::string s = "[";
  for (int i = 0; i < t.ndim; ++i) s += (i ? "," : "") + std::to_string(t.shape[static_cast<size_t>(i)]);
  return s + "]";
}

std::string mib(int64_t floats) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(floats) * 4.0 / (1 << 20));
  return buf;
}

}  // namespace

std::string tape_dump(const Tape& tape, const MemoryPlan& plan) {
  const std::vector<TapeEntry>& entries = tape.entries();
  const std::vector<TapeTensor>& tensors = tape.tensors();
  TG_CHECK(plan.entries == static_cast<int64_t>(entries.size()));
  std::string out;
  char line[256];
  auto block_of = [&](size_t e) -> int64_t {
    for (const TapeBlock& b : tape.blocks())
      if (e >= b.begin && e < b.end) return b.layer;
    return -1;
  };
  std::snprintf(line, sizeof line,
                "forward: %zu entries; tensor tN's data and gradient at offsets in MiB "
                "(grad=data: written over the data); * recomputed in backward\n",
                entries.size());
  out += line;
  std::snprintf(line, sizeof line, "%5s %5s  %-14s %-12s %-6s %-16s %10s %10s\n", "entry", "block",
                "op", "reads", "makes", "shape", "data@MiB", "grad@MiB");
  out += line;
  for (size_t e = 0; e < entries.size(); ++e) {
    const TapeEntry& entry = entries[e];
    std::string reads;
    for (int32_t in : entry.inputs)
      if (in >= 0) reads += (reads.empty() ? "t" : ",t") + std::to_string(in);
    if (reads.empty()) reads = "-";
    const TapeTensor& t = tensors[static_cast<size_t>(entry.output)];
    const auto d = static_cast<size_t>(t.data), g = static_cast<size_t>(t.grad);
    const std::string grad = plan.alias[g] >= 0 ? "=data" : mib(plan.offset[g]);
    const int64_t block = block_of(e);
    std::snprintf(line, sizeof line, "%5zu %5s  %-14s %-12s t%-5d %-16s %10s %10s%s\n", e,
                  block >= 0 ? std::to_string(block).c_str() : "-", entry.op, reads.c_str(),
                  entry.output, shape_text(t).c_str(), mib(plan.offset[d]).c_str(), grad.c_str(),
                  plan.recomputed[e] ? " *" : "");
    out += line;
  }
  out += "backward (in this order; before an entry: rerun = its forward again, zero = a gradient "
         "about to be first written):\n";
  auto zeroes = [&](size_t i) {
    std::string s;
    for (int32_t z = plan.zero_begin[i]; z < plan.zero_begin[i + 1]; ++z)
      s += " zero t" + std::to_string(tape.buffers()[static_cast<size_t>(plan.zero[z])].tensor) + ".grad";
    return s;
  };
  if (plan.zero_begin[entries.size()] < plan.zero_begin[entries.size() + 1])
    out += "    start:" + zeroes(entries.size()) + "\n";
  for (size_t i = entries.size(); i-- > 0;) {
    std::string before;
    for (int32_t r = plan.rerun_begin[i]; r < plan.rerun_begin[i + 1]; ++r)
      before += " rerun " + std::to_string(plan.rerun[r]) + " " + entries[static_cast<size_t>(plan.rerun[r])].op;
    before += zeroes(i);
    std::snprintf(line, sizeof line, "%5zu %-14s%s\n", i, entries[i].op, before.c_str());
    out += line;
  }
  out += "arena: " + mib(plan.total_floats) + " MiB planned; " + mib(plan.unplanned_floats) +
         " MiB if every buffer had floats of its own\n";
  return out;
}

}  // namespace autograd
