// Scanning and streaming the inputs of prepare (see corpus_reader.h).
#include "data/corpus_reader.h"

#include <cstring>

#include "autograd/base/check.h"
#include "autograd/base/errors.h"
#include "data/utf8.h"

namespace data {
namespace {

constexpr size_t kScanBlock = size_t{1} << 20;

std::unique_ptr<ByteReader> open_input(const CorpusInput& in) {
  return std::make_unique<ByteReader>(in.path, in.fd);
}

// Start of a UTF-8 sequence at the end of buf[0..n) that may continue in
// the next read (n when the last byte is ASCII).
size_t utf8_tail_start(const char* buf, size_t n) {
  for (size_t back = 1; back <= 4 && back <= n; ++back) {
    const auto c = static_cast<unsigned char>(buf[n - back]);
    if (c < 0x80) return n - back + 1;
    if ((c & 0xC0) != 0x80) return n - back;  // a lead byte
  }
  return n;  // stray continuation bytes: validation reports them
}

void scan_one(CorpusInput& in, const CorpusScanOptions& o) {
  ByteReader reader(in.path, in.fd);
  std::vector<char> buf(kScanBlock + 4);
  size_t carry = 0;  // bytes of an unfinished UTF-8 sequence kept at buf[0..carry)
  int64_t offset = 0;  // file offset of buf[0]
  char last = 0;
  for (;;) {
    const size_t got = reader.read(buf.data() + carry, kScanBlock);
    const size_t n = carry + got;
    if (got > 0) last = buf[carry + got - 1];
    if (const void* nul = std::memchr(buf.data() + carry, 0, got)) {
      const int64_t at = offset + static_cast<int64_t>(static_cast<const char*>(nul) - buf.data());
      throw tg::DataError("input " + in.path + " contains a NUL byte at offset " + std::to_string(at) +
                          "; it looks like a binary file, not text");
    }
    const size_t upto = (got == 0 || !o.need_utf8) ? n : utf8_tail_start(buf.data(), n);
    const std::string_view text(buf.data(), upto);
    if (o.need_utf8) {
      const size_t bad = utf8_invalid_at(text);
      if (bad != std::string_view::npos) {
        throw tg::DataError("input " + in.path + " is not valid UTF-8 (byte offset " +
                            std::to_string(offset + static_cast<int64_t>(bad)) +
                            "); the tokenizer needs UTF-8 text, so convert it or use --tokenizer bpe or byte");
      }
      if (o.chars != nullptr) {
        for (size_t i = 0; i < text.size();) (*o.chars)[utf8_next(text, i)] = true;
      }
    }
    if (got == 0) break;
    carry = n - upto;
    std::memmove(buf.data(), buf.data() + upto, carry);
    offset += static_cast<int64_t>(upto);
    in.bytes += static_cast<int64_t>(got);
  }
  if (in.bytes == 0) throw tg::DataError("input " + in.path + " is empty; give a text file with some content");
  in.ends_in_newline = last == '\n';
}

}  // namespace

int64_t corpus_scan(std::vector<CorpusInput>& inputs, const CorpusScanOptions& o) {
  int64_t total = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i].bytes = 0;
    scan_one(inputs[i], o);
    total += inputs[i].bytes;
    if (o.join_newline && i + 1 < inputs.size() && !inputs[i].ends_in_newline) ++total;
  }
  return total;
}

CorpusReader::CorpusReader(const std::vector<CorpusInput>& inputs, bool join_newline)
    : inputs_(inputs), join_newline_(join_newline) {
  TG_CHECK(!inputs.empty());
  open_next_file();
}

CorpusReader::~CorpusReader() = default;

bool CorpusReader::open_next_file() {
  if (file_ >= inputs_.size()) return false;
  reader_ = open_input(inputs_[file_]);
  file_read_ = 0;
  return true;
}

void CorpusReader::close_file() {
  const CorpusInput& in = inputs_[file_];
  if (file_read_ != in.bytes) {
    throw tg::DataError("input " + in.path + " changed while prepare was reading it (" + std::to_string(in.bytes) +
                        " bytes, now " + std::to_string(file_read_) + "); run prepare again on a file nobody writes");
  }
  reader_.reset();
  ++file_;
}

size_t CorpusReader::read(char* dst, size_t n) {
  while (n > 0 && !doc_done_) {
    if (pending_newline_) {
      pending_newline_ = false;
      dst[0] = '\n';
      return 1;
    }
    const size_t got = reader_->read(dst, n);
    file_read_ += static_cast<int64_t>(got);
    if (got > 0) {
      if (file_read_ > inputs_[file_].bytes) close_file();  // grew: reported here
      return got;
    }
    const bool had_newline = inputs_[file_].ends_in_newline;
    close_file();
    if (!join_newline_ || file_ >= inputs_.size()) {
      doc_done_ = true;
      break;
    }
    pending_newline_ = !had_newline;
    open_next_file();
  }
  return 0;
}

bool CorpusReader::next_document() {
  TG_CHECK(doc_done_);
  if (file_ >= inputs_.size()) return false;
  doc_done_ = false;
  return open_next_file();
}

}  // namespace data
