// BlockStream: the corpus text cut into blocks that can be tokenized apart
// (Note [Safe block cuts]), each tagged with its split, with bounded memory.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "data/block_cut.h"
#include "data/corpus_reader.h"

namespace data {

struct TextBlock {
  std::string_view text;
  int split = 0;            // 0: train (before the cut), 1: val
  bool doc_start = false;   // the first block of a document other than the first
};

// Segments are tokenized separately: the train text, the val text and, when
// each input is its own document, every document. Inside a segment blocks
// end at safe cuts, so their ids equal those of the whole segment.
//
// The train/val cut is known before its bytes are tokenized: pass 1 gave the
// total length, and the cut is floor(total * (1 - val_fraction)) moved back
// to a UTF-8 boundary (as the one-shot prepare did). Until the byte at the
// cut has been read, no block goes within 3 bytes of it.
class BlockStream {
 public:
  // cut_target = floor(total * (1 - val_fraction)); block_bytes is the usual
  // block length (a block is longer only when no safe cut comes sooner).
  BlockStream(CorpusReader& reader, CutRule rule, int64_t total, int64_t cut_target, size_t block_bytes);

  // The next blocks, about max_bytes of text in all; empty at the end. The
  // views stay valid until the next call. The buffer holds max_bytes plus
  // one block, more only while no safe cut has been found.
  const std::vector<TextBlock>& next_batch(size_t max_bytes);

  int64_t bytes_done() const { return buf_start_ + static_cast<int64_t>(consumed_); }
  // The train/val cut (bytes of train text); valid once the stream has ended.
  int64_t cut() const { return cut_; }

 private:
  void fill(size_t want);
  void note_cut();

  CorpusReader& reader_;
  CutRule rule_;
  int64_t total_, cut_target_;
  int64_t cut_ = -1;  // -1 until known
  size_t block_bytes_;

  std::string buf_;
  int64_t buf_start_ = 0;  // text offset of buf_[0]
  size_t consumed_ = 0;    // buf_[0..consumed_) is in earlier blocks
  int64_t read_pos_ = 0;   // text offset of the end of buf_
  bool eof_ = false;
  std::deque<int64_t> doc_ends_;  // text offsets of document ends read but not yet passed
  int split_ = 0;
  bool doc_start_next_ = false;
  int64_t no_cut_until_ = 0;  // text offset: no safe cut found before it (after the last block)

  struct Span { size_t begin, end; int split; bool doc_start; };
  std::vector<Span> spans_;
  std::vector<TextBlock> blocks_;
};

}  // namespace data
