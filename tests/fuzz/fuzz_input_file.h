// FuzzInputFile: the fuzz input written to a private temporary file, for
// readers that take a path (checkpoints, token files).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace fuzz {

// One file per process, rewritten for every input: libFuzzer runs inputs one
// at a time in a process (and -fork/-jobs children have their own pids).
class FuzzInputFile {
 public:
  explicit FuzzInputFile(const char* suffix)
      : path_(std::string("/tmp/tapegpt-fuzz-") + std::to_string(getpid()) + suffix) {}
  ~FuzzInputFile() { std::remove(path_.c_str()); }

  const std::string& write(const uint8_t* data, size_t size) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (!f) throw std::runtime_error("cannot write " + path_);
    if (size && std::fwrite(data, 1, size, f) != size) throw std::runtime_error("short write " + path_);
    std::fclose(f);
    return path_;
  }

 private:
  std::string path_;
};

}  // namespace fuzz
