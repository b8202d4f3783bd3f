// BPE training with incremental pair counts (see bpe_train.h).
//
// Note [Incremental BPE training]: the corpus becomes its distinct chunks with
// their counts, each a list of token ids. pair_count holds the weighted count
// of every adjacent pair and pair_words the chunks it may occur in. A merge
// rewrites only the chunks holding its pair: their old pairs are subtracted,
// their new pairs added. A max-heap picks the next pair; its entries may be
// stale (a count only falls, except for pairs containing the new token, which
// are pushed afresh), so a popped entry whose count is out of date is pushed
// back with the current count. Each merge thus costs the size of the chunks it
// touches, not the size of the corpus.
#include "data/bpe_train.h"

#include <algorithm>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "autograd/base/errors.h"
#include "data/bpe_merge.h"
#include "data/bpe_split.h"

namespace data {
namespace {

struct HeapEntry {
  int64_t count;
  uint64_t key;  // merge_key(left, right): comparing keys compares (left, right)
};

// Top of the heap: highest count, then smallest (left, right).
struct HeapOrder {
  bool operator()(const HeapEntry& a, const HeapEntry& b) const {
    if (a.count != b.count) return a.count < b.count;
    return a.key > b.key;
  }
};

struct Word {
  std::vector<int32_t> ids;
  int64_t count;
};

}  // namespace

TokenizerSpec bpe_train(std::string_view text, int64_t vocab_size, const Progress& progress,
                        const std::string& split) {
  ChunkCounter counter(0, split);
  counter.add(text);
  return bpe_train_counts(counter.sorted(), vocab_size, progress, split);
}

ChunkCounter::ChunkCounter(size_t max_entries, std::string split)
    : max_entries_(max_entries), split_(std::move(split)) {}

void ChunkCounter::add(std::string_view text) {
  bpe_split(split_, text, [&](size_t begin, size_t end) {
    if (end - begin < 2) return;  // nothing to merge in a single byte
    ++counts_[std::string(text.substr(begin, end - begin))];
    if (max_entries_ > 0 && counts_.size() > max_entries_) prune();
  });
}

// Note [Bounded chunk counts]: when the table is full, every chunk seen at
// most `floor_` times is forgotten, the floor doubling until at most half
// the table is left. Frequent chunks, which decide the merges, stay with
// exact counts from the moment they last entered; rare ones (counts below
// the final floor) may be missing or undercounted.
void ChunkCounter::prune() {
  while (counts_.size() > max_entries_ / 2) {
    for (auto it = counts_.begin(); it != counts_.end();) {
      if (it->second <= floor_) {
        dropped_ += it->second;
        it = counts_.erase(it);
      } else {
        ++it;
      }
    }
    if (counts_.size() > max_entries_ / 2) floor_ *= 2;
  }
  ++prunes_;
}

std::vector<std::pair<std::string, int64_t>> ChunkCounter::sorted() {
  std::vector<std::pair<std::string, int64_t>> chunks(counts_.begin(), counts_.end());
  counts_.clear();
  std::sort(chunks.begin(), chunks.end());
  return chunks;
}

// Note [Distinct token bytes]: two merges can make the same bytes, e.g.
// (a, bc) in one chunk and (ab, c) in another. Our encoder works on ids, so
// that is harmless here, but the byte-level files of export (GGUF, vocab.json)
// name tokens by their bytes and could not tell the two apart. So with the
// gpt2 split, the exportable one, a pair whose bytes already are a token is
// never merged; the byte-class split keeps its old merges exactly.
TokenizerSpec bpe_train_counts(const std::vector<std::pair<std::string, int64_t>>& chunks, int64_t vocab_size,
                               const Progress& progress, const std::string& split) {
  if (vocab_size < 256 || vocab_size > kMaxVocabSize) {
    throw tg::UsageError("--vocab-size " + std::to_string(vocab_size) + " is outside [256, " +
                         std::to_string(kMaxVocabSize) + "] for the bpe tokenizer (256 bytes + merges)");
  }
  TokenizerSpec spec;
  spec.type = "bpe";
  spec.split = split;
  const bool distinct = !split.empty();
  std::unordered_set<std::string> token_bytes;  // with `distinct`: every token's bytes
  std::unordered_set<uint64_t> never;           // pairs skipped for that reason
  for (int b = 0; b < 256; ++b) spec.tokens.push_back(std::string(1, static_cast<char>(b)));
  if (distinct) token_bytes.insert(spec.tokens.begin(), spec.tokens.end());

  std::vector<Word> words;
  words.reserve(chunks.size());
  for (const auto& [chunk, count] : chunks) {
    if (chunk.size() < 2) continue;
    Word w{{}, count};
    for (char c : chunk) w.ids.push_back(static_cast<unsigned char>(c));
    words.push_back(std::move(w));
  }

  std::unordered_map<uint64_t, int64_t> pair_count;
  std::unordered_map<uint64_t, std::vector<int32_t>> pair_words;
  for (size_t wi = 0; wi < words.size(); ++wi) {
    const Word& w = words[wi];
    for (size_t i = 0; i + 1 < w.ids.size(); ++i) {
      const uint64_t key = merge_key(w.ids[i], w.ids[i + 1]);
      pair_count[key] += w.count;
      auto& list = pair_words[key];
      if (list.empty() || list.back() != static_cast<int32_t>(wi)) list.push_back(static_cast<int32_t>(wi));
    }
  }
  std::priority_queue<HeapEntry, std::vector<HeapEntry>, HeapOrder> heap;
  for (const auto& [key, count] : pair_count) heap.push({count, key});

  const int64_t wanted = vocab_size - 256;
  std::vector<uint64_t> touched;  // pairs with the new token, to push afresh
  while (static_cast<int64_t>(spec.merges.size()) < wanted && !heap.empty()) {
    const HeapEntry top = heap.top();
    heap.pop();
    if (never.count(top.key)) continue;
    auto count_it = pair_count.find(top.key);
    const int64_t current = count_it == pair_count.end() ? 0 : count_it->second;
    if (current != top.count) {
      if (current > 0) heap.push({current, top.key});
      continue;
    }
    const int32_t left = static_cast<int32_t>(top.key >> 32);
    const int32_t right = static_cast<int32_t>(top.key & 0xFFFFFFFFu);
    if (distinct && !token_bytes.insert(spec.tokens[left] + spec.tokens[right]).second) {
      never.insert(top.key);  // its later heap entries are skipped above
      continue;
    }
    const int32_t merged = static_cast<int32_t>(spec.tokens.size());
    spec.tokens.push_back(spec.tokens[left] + spec.tokens[right]);
    spec.merges.push_back({left, right});

    std::vector<int32_t> list = std::move(pair_words[top.key]);
    pair_words.erase(top.key);
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    touched.clear();
    for (int32_t wi : list) {
      Word& w = words[wi];
      std::vector<int32_t>& ids = w.ids;
      bool found = false;
      for (size_t i = 0; i + 1 < ids.size() && !found; ++i) found = ids[i] == left && ids[i + 1] == right;
      if (!found) continue;  // merged away by an earlier merge; the list was stale
      for (size_t i = 0; i + 1 < ids.size(); ++i) pair_count[merge_key(ids[i], ids[i + 1])] -= w.count;
      size_t o = 0;
      for (size_t i = 0; i < ids.size();) {
        if (i + 1 < ids.size() && ids[i] == left && ids[i + 1] == right) {
          ids[o++] = merged;
          i += 2;
        } else {
          ids[o++] = ids[i++];
        }
      }
      ids.resize(o);
      for (size_t i = 0; i + 1 < ids.size(); ++i) {
        const uint64_t key = merge_key(ids[i], ids[i + 1]);
        pair_count[key] += w.count;
        if (ids[i] == merged || ids[i + 1] == merged) {
          auto& words_of_pair = pair_words[key];
          if (words_of_pair.empty() || words_of_pair.back() != wi) words_of_pair.push_back(wi);
          touched.push_back(key);
        }
      }
    }
    pair_count.erase(top.key);
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (uint64_t key : touched) {
      const int64_t c = pair_count[key];
      if (c > 0) heap.push({c, key});
    }
    if (progress && spec.merges.size() % 64 == 0) progress(static_cast<int64_t>(spec.merges.size()), wanted);
  }
  if (progress) progress(static_cast<int64_t>(spec.merges.size()), wanted);
  return spec;
}

}  // namespace data
