// The inputs of prepare read as one text: checked in a first pass, then
// streamed as documents in a second.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/byte_reader.h"

namespace data {

// One input: a path, or "-" for standard input, which prepare first copies
// to an unlinked temporary file (stdin_fd) so that it can be read twice.
struct CorpusInput {
  std::string path;  // as shown in messages ("standard input" for -)
  int fd = -1;       // >= 0: read this descriptor (the stdin copy)
  int64_t bytes = 0; // decompressed size, filled by corpus_scan
  bool ends_in_newline = false;
};

struct CorpusScanOptions {
  bool need_utf8 = false;     // char, gpt2: reject invalid UTF-8
  bool join_newline = true;   // a '\n' between files that lack one (not with --eot)
  std::vector<bool>* chars = nullptr;  // char: set chars[code point] for each one seen
};

// Pass 1: reads every input to its end, filling bytes and ends_in_newline,
// and rejects (tg::DataError naming the file and byte offset) inputs that
// are empty, hold a NUL byte, or are not UTF-8 when need_utf8. Returns the
// length of the whole text: every input plus the joining newlines.
int64_t corpus_scan(std::vector<CorpusInput>& inputs, const CorpusScanOptions& options);

// Pass 2: the text again as documents. With join_newline the whole corpus
// is one document (inputs joined by '\n' where one lacks it), as pass 1
// counted it; otherwise each input is one document. A file whose size
// changed since pass 1 is a tg::DataError.
class CorpusReader {
 public:
  CorpusReader(const std::vector<CorpusInput>& inputs, bool join_newline);
  ~CorpusReader();

  // Up to n bytes of the current document; 0 at its end.
  size_t read(char* dst, size_t n);
  // Moves to the next document; false when there is none.
  bool next_document();

 private:
  bool open_next_file();
  void close_file();

  const std::vector<CorpusInput>& inputs_;
  bool join_newline_;
  size_t file_ = 0;      // index of the open (or next) input
  std::unique_ptr<ByteReader> reader_;
  int64_t file_read_ = 0;
  bool pending_newline_ = false;
  bool doc_done_ = false;
};

}  // namespace data
