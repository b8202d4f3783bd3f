// TokenWriter: a token file written as the tokens come, its count filled in
// at the end (Note [Token file format]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/base/atomic_file.h"

namespace data {

class TokenWriter {
 public:
  // Writes a header into `file` (an tg::AtomicFile the caller finishes and
  // publishes after finish()); `path` names the file in messages.
  TokenWriter(tg::AtomicFile& file, std::string path, int64_t vocab_size);

  // Appends ids; tg::DataError for an id outside [0, vocab_size) or a failed write.
  void append(const int32_t* tokens, size_t n);
  // Writes the final token count into the header.
  void finish();
  int64_t count() const { return count_; }

 private:
  tg::AtomicFile& file_;
  std::string path_;
  int64_t vocab_size_;
  int width_;
  int64_t count_ = 0;
  std::vector<unsigned char> block_;
};

}  // namespace data
