// ByteReader: reads one input file as a stream of bytes, decompressing gzip,
// xz and zstd (recognised by their magic bytes, not the file name) through
// zlib, liblzma and libzstd.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace data {

class ByteReader {
 public:
  // Opens `path` for reading (fd >= 0: read that descriptor instead, from its
  // start, and show `path` in messages; the reader does not close it).
  // Throws tg::DataError when it is missing, unreadable or not a regular file.
  explicit ByteReader(const std::string& path, int fd = -1);
  ~ByteReader();
  ByteReader(const ByteReader&) = delete;
  ByteReader& operator=(const ByteReader&) = delete;

  // Up to n decompressed bytes into dst; 0 only at the end. Throws
  // tg::DataError naming the file when reading fails or compressed data is
  // corrupt or truncated.
  size_t read(char* dst, size_t n);

  const std::string& path() const { return path_; }
  // "gzip", "xz", "zstd" or "" for a plain file.
  const char* compression() const;

  struct Decoder;  // one per format, in byte_reader.cpp

 private:
  std::string path_;
  int fd_ = -1;
  bool own_fd_ = false;
  std::unique_ptr<Decoder> decoder_;
};

}  // namespace data
