// The BPE merge loop on one chunk (see bpe_merge.h).
#include "data/bpe_merge.h"

#include <limits>
#include <queue>

namespace data {

// Chunks up to this length use the reference's round-by-round loop; longer
// ones (rare: a 100 KB word takes the loop seconds) use the heap below.
constexpr size_t kLongChunk = 256;


// GPT-2's loop as written: each round scans all pairs for the lowest rank
// (rightmost on ties, as the reference) and merges every occurrence of it.
// O(length * rounds).
void bpe_merge_rounds(const MergeTable& table, std::vector<int32_t>& w) {
  while (w.size() >= 2) {
    int32_t best_rank = std::numeric_limits<int32_t>::max();
    const MergeRule* best = nullptr;
    int32_t left = 0, right = 0;
    for (size_t i = 0; i + 1 < w.size(); ++i) {
      auto it = table.rules.find(merge_key(w[i], w[i + 1]));
      if (it != table.rules.end() && it->second.rank <= best_rank) {
        best_rank = it->second.rank;
        best = &it->second;
        left = w[i];
        right = w[i + 1];
      }
    }
    if (best == nullptr) break;
    size_t o = 0;
    for (size_t i = 0; i < w.size();) {
      if (i + 1 < w.size() && w[i] == left && w[i + 1] == right) {
        w[o++] = best->result;
        i += 2;
      } else {
        w[o++] = w[i++];
      }
    }
    w.resize(o);
  }
}

// The same merges in O(length * log length): a linked list of symbols and a
// min-heap of candidate pairs keyed by (rank, position). Popping in that
// order merges the lowest rank first and, within a rank, left to right
// without overlap, which is exactly what one round above does: a merge of
// (a, b) never creates another (a, b) pair, since the new token is longer
// than a and b. Entries go stale when a neighbour changes; a symbol's id at a
// position only ever grows into a longer token, so an entry is still valid
// iff both ids it recorded are still there. (The one case this does not
// reproduce is two different pairs tied at one rank, which only GPT-2's
// comma aliases can cause, and only in chunks longer than kLongChunk.)
void bpe_merge_heap(const MergeTable& table, std::vector<int32_t>& w) {
  struct Candidate {
    int32_t rank;
    int32_t pos;  // index of the left symbol
    int32_t left, right;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  const auto n = static_cast<int32_t>(w.size());
  std::vector<int32_t> next(n), prev(n);
  for (int32_t i = 0; i < n; ++i) {
    next[i] = i + 1 < n ? i + 1 : -1;
    prev[i] = i - 1;
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  auto push = [&](int32_t pos) {
    if (pos < 0 || next[pos] < 0) return;
    auto it = table.rules.find(merge_key(w[pos], w[next[pos]]));
    if (it != table.rules.end()) heap.push({it->second.rank, pos, w[pos], w[next[pos]]});
  };
  for (int32_t i = 0; i + 1 < n; ++i) push(i);
  std::vector<bool> dead(n, false);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    const int32_t r = next[c.pos];
    if (dead[c.pos] || r < 0 || w[c.pos] != c.left || w[r] != c.right) continue;  // stale
    w[c.pos] = table.rules.at(merge_key(c.left, c.right)).result;
    dead[r] = true;
    next[c.pos] = next[r];
    if (next[r] >= 0) prev[next[r]] = c.pos;
    push(prev[c.pos]);
    push(c.pos);
  }
  size_t o = 0;
  for (int32_t i = 0; i < n; ++i) {
    if (!dead[i]) w[o++] = w[i];
  }
  w.resize(o);
}

void bpe_merge_chunk(const MergeTable& table, std::string_view chunk, std::vector<int32_t>& out) {
  std::vector<int32_t> w(chunk.size());
  for (size_t i = 0; i < chunk.size(); ++i) w[i] = table.byte_ids[static_cast<unsigned char>(chunk[i])];
  if (chunk.size() <= kLongChunk) {
    bpe_merge_rounds(table, w);
  } else {
    bpe_merge_heap(table, w);
  }
  out.insert(out.end(), w.begin(), w.end());
}

}  // namespace data
