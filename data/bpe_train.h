// Training our byte-level BPE tokenizer on a corpus.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "data/tokenizer.h"
#include "data/tokenizer_spec.h"

namespace data {

// Learns merges until the vocabulary has `vocab_size` tokens (256 bytes plus
// one token per merge), or until no two adjacent tokens remain anywhere.
// Chunks come from bpe_split with `split` ("" byte-class or "gpt2", Note [BPE
// pre-split]), so merges never cross a chunk. The most frequent pair wins;
// ties go to the smaller (left id, right id), so the result depends only on
// the text, vocab_size and split. With the gpt2 split a pair whose bytes
// already are a token is never merged (Note [Distinct token bytes] in
// bpe_train.cpp). progress, if given, gets (merges done, merges wanted).
// Throws tg::UsageError when vocab_size is outside [256, kMaxVocabSize].
TokenizerSpec bpe_train(std::string_view text, int64_t vocab_size, const Progress& progress = nullptr,
                        const std::string& split = "");

// The same from chunk counts (sorted by chunk, as ChunkCounter::sorted).
TokenizerSpec bpe_train_counts(const std::vector<std::pair<std::string, int64_t>>& chunks, int64_t vocab_size,
                               const Progress& progress = nullptr, const std::string& split = "");

// Counts the chunks (by `split`) of a text given in pieces cut at safe cuts
// (so chunks never cross a piece), in a table of at most max_entries chunks
// (0: no limit; Note [Bounded chunk counts] in bpe_train.cpp).
class ChunkCounter {
 public:
  explicit ChunkCounter(size_t max_entries, std::string split = "");
  void add(std::string_view text);
  // The counts, sorted by chunk; empties the table.
  std::vector<std::pair<std::string, int64_t>> sorted();
  int64_t dropped() const { return dropped_; }  // chunk occurrences forgotten
  int64_t prunes() const { return prunes_; }

 private:
  void prune();
  size_t max_entries_;
  std::string split_;
  std::unordered_map<std::string, int64_t> counts_;
  int64_t floor_ = 1, dropped_ = 0, prunes_ = 0;
};

}  // namespace data
