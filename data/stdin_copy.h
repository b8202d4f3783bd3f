// StdinCopy: standard input copied to an unlinked temporary file, so that
// prepare can read it twice (Note [Streaming prepare]) with bounded memory.
#pragma once

#include <string>

namespace data {

class StdinCopy {
 public:
  // Copies all of standard input into a file created in `dir` (the --out
  // directory, where the user expects prepare's disk use) and unlinked at
  // once, so nothing is left behind even if prepare is killed. Throws
  // tg::DataError when the file cannot be made or written.
  explicit StdinCopy(const std::string& dir);
  ~StdinCopy();
  StdinCopy(const StdinCopy&) = delete;
  StdinCopy& operator=(const StdinCopy&) = delete;

  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

}  // namespace data
