// Streaming token file writing (see token_writer.h).
#include "data/token_writer.h"

#include "autograd/base/errors.h"
#include "data/token_file.h"

namespace data {

TokenWriter::TokenWriter(tg::AtomicFile& file, std::string path, int64_t vocab_size)
    : file_(file), path_(std::move(path)), vocab_size_(vocab_size), width_(token_width_for_vocab(vocab_size)) {
  if (vocab_size < 1 || vocab_size > INT32_MAX) {
    throw tg::DataError("cannot write " + path_ + ": vocabulary size " + std::to_string(vocab_size) +
                        " does not fit a token file (1 .. 2^31-1)");
  }
  unsigned char header[kTokenFileHeaderBytes];
  token_file_header(header, 0, vocab_size_);
  file_.write(header, sizeof header);
}

void TokenWriter::append(const int32_t* tokens, size_t n) {
  block_.resize(n * static_cast<size_t>(width_));
  unsigned char* q = block_.data();
  for (size_t i = 0; i < n; ++i, q += width_) {
    const int32_t t = tokens[i];
    if (t < 0 || t >= vocab_size_) {
      throw tg::DataError("cannot write " + path_ + ": token " + std::to_string(t) + " at position " +
                          std::to_string(count_ + static_cast<int64_t>(i)) + " is outside the vocabulary of " +
                          std::to_string(vocab_size_));
    }
    const auto u = static_cast<uint32_t>(t);
    q[0] = static_cast<unsigned char>(u);
    q[1] = static_cast<unsigned char>(u >> 8);
    if (width_ == 4) {
      q[2] = static_cast<unsigned char>(u >> 16);
      q[3] = static_cast<unsigned char>(u >> 24);
    }
  }
  file_.write(block_.data(), block_.size());
  count_ += static_cast<int64_t>(n);
}

void TokenWriter::finish() {
  unsigned char header[kTokenFileHeaderBytes];
  token_file_header(header, count_, vocab_size_);
  file_.rewrite_start(header, sizeof header);
}

}  // namespace data
