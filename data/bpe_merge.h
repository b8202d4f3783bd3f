// Applying BPE merges to one chunk of bytes: the merge table shared by our
// own BPE and GPT-2, and the rank-ordered merge loop.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace data {

// What an adjacent pair of tokens (left, right) turns into, and when.
struct MergeRule {
  int32_t rank;    // lower merges first
  int32_t result;  // the id of the merged token
};

struct MergeTable {
  std::array<int32_t, 256> byte_ids{};                // id of the one-byte token for each byte
  std::unordered_map<uint64_t, MergeRule> rules;      // key: merge_key(left, right)
};

inline uint64_t merge_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

// Appends the ids of `chunk` to `out`: one token per byte, then, while some
// adjacent pair has a rule, every occurrence of the lowest-ranked pair is
// merged, left to right and without overlap ("aaa" with (a,a) -> "aa","a").
// This is GPT-2's bpe() loop. When two different pairs share the lowest rank
// (only through GPT-2's comma aliases, Note [gpt-3-encoder comma keys]) the
// rightmost one is merged, as the reference does. Long chunks take an
// O(n log n) path with the same result (see bpe_merge.cpp).
void bpe_merge_chunk(const MergeTable& table, std::string_view chunk, std::vector<int32_t>& out);

// The two implementations bpe_merge_chunk picks between, on ids in place:
// the reference's round-by-round loop, O(n * rounds), the test oracle; and a
// heap over a linked list, O(n log n), for long chunks.
void bpe_merge_rounds(const MergeTable& table, std::vector<int32_t>& ids);
void bpe_merge_heap(const MergeTable& table, std::vector<int32_t>& ids);

}  // namespace data
