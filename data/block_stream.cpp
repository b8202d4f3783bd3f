// Cutting the streamed corpus into blocks (see block_stream.h).
#include "data/block_stream.h"

#include <algorithm>

#include "autograd/base/check.h"
#include "data/utf8.h"

namespace data {

namespace {
constexpr size_t kReadBytes = size_t{1} << 20;
constexpr int64_t kNone = INT64_MAX;
}  // namespace

BlockStream::BlockStream(CorpusReader& reader, CutRule rule, int64_t total, int64_t cut_target, size_t block_bytes)
    : reader_(reader), rule_(rule), total_(total), cut_target_(cut_target), block_bytes_(std::max<size_t>(block_bytes, 1)) {
  TG_CHECK(cut_target >= 0);
  if (cut_target_ >= total_) cut_ = total_;
}

void BlockStream::note_cut() {
  if (cut_ >= 0 || read_pos_ <= cut_target_) return;
  // The whole text's utf8_boundary_before: at most 3 bytes back, all still here.
  const auto at = static_cast<size_t>(cut_target_ - buf_start_);
  TG_CHECK(at >= consumed_);
  cut_ = buf_start_ + static_cast<int64_t>(utf8_boundary_before(buf_, at));
  TG_CHECK(cut_ >= buf_start_ + static_cast<int64_t>(consumed_));
}

void BlockStream::fill(size_t want) {
  while (!eof_ && buf_.size() - consumed_ < want) {
    const size_t old = buf_.size();
    buf_.resize(old + kReadBytes);
    const size_t got = reader_.read(&buf_[old], kReadBytes);
    buf_.resize(old + got);
    read_pos_ += static_cast<int64_t>(got);
    if (got == 0) {
      doc_ends_.push_back(read_pos_);
      if (!reader_.next_document()) eof_ = true;
    }
    note_cut();
  }
  if (eof_) TG_CHECK(read_pos_ == total_);
}

const std::vector<TextBlock>& BlockStream::next_batch(size_t max_bytes) {
  buf_.erase(0, consumed_);
  buf_start_ += static_cast<int64_t>(consumed_);
  consumed_ = 0;
  spans_.clear();
  size_t taken = 0;
  size_t want = max_bytes + block_bytes_;
  for (;;) {
    fill(want);
    bool stuck = false;
    while (taken < max_bytes && !stuck) {
      const size_t pos = consumed_;
      const int64_t gpos = buf_start_ + static_cast<int64_t>(pos);
      if (split_ == 0 && gpos == cut_) split_ = 1;
      while (!doc_ends_.empty() && doc_ends_.front() == gpos) {
        doc_ends_.pop_front();
        doc_start_next_ = true;
      }
      if (pos == buf_.size()) {
        stuck = !eof_;
        if (eof_) break;
        continue;
      }
      const int64_t buf_end = buf_start_ + static_cast<int64_t>(buf_.size());
      int64_t seg_end = doc_ends_.empty() ? kNone : doc_ends_.front();
      if (split_ == 0 && cut_ >= 0 && cut_ <= buf_end) seg_end = std::min(seg_end, cut_);
      // A document end near a cut not yet known must wait: the cut may move before it.
      if (cut_ < 0 && seg_end != kNone && seg_end > cut_target_ - 3) seg_end = kNone;
      // Bytes usable for cutting: all read ones, but none near a cut not yet known.
      int64_t limit = buf_end;
      if (cut_ < 0) limit = std::min(limit, cut_target_ - 3);
      size_t end = 0;
      if (seg_end != kNone && seg_end - gpos <= static_cast<int64_t>(block_bytes_)) {
        end = static_cast<size_t>(seg_end - buf_start_);
      } else {
        limit = std::min(limit, seg_end);
        const std::string_view view(buf_.data(), static_cast<size_t>(std::max<int64_t>(limit - buf_start_, 0)));
        const size_t hi = pos + block_bytes_;
        if (hi < view.size()) {
          end = safe_cut_at_or_before(rule_, view, hi, pos + 1);
          // Forward, skipping what an earlier (stuck) search already found cut-free.
          const auto from = static_cast<size_t>(std::max<int64_t>(static_cast<int64_t>(hi + 1), no_cut_until_ - buf_start_));
          if (end == 0 && from < view.size()) end = safe_cut_at_or_after(rule_, view, from);
          if (end == 0) no_cut_until_ = buf_start_ + static_cast<int64_t>(view.size());
        }
        if (end == 0 && seg_end != kNone) end = static_cast<size_t>(seg_end - buf_start_);
        if (end == 0) {
          stuck = true;  // more text needed to find a cut
          continue;
        }
      }
      TG_CHECK(end > pos && end <= buf_.size());
      spans_.push_back({pos, end, split_, doc_start_next_});
      doc_start_next_ = false;
      consumed_ = end;
      taken += end - pos;
    }
    if (!stuck || !spans_.empty() || eof_) break;
    want = buf_.size() - consumed_ + block_bytes_;  // no cut yet: read further
  }
  blocks_.clear();
  for (const Span& s : spans_) {
    blocks_.push_back({std::string_view(buf_.data() + s.begin, s.end - s.begin), s.split, s.doc_start});
  }
  return blocks_;
}

}  // namespace data
