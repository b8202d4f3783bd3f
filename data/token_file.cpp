// Token file writing and memory-mapped reading (Note [Token file format]).
#include "data/token_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

#include "autograd/base/check.h"
#include "autograd/base/errors.h"
#include "autograd/base/atomic_file.h"
#include "autograd/base/fnv.h"

namespace data {
namespace {

void put_le(unsigned char* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

uint64_t get_le(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

inline int32_t token_at(const unsigned char* p, int width, int64_t i) {
  const unsigned char* q = p + i * width;
  if (width == 2) return static_cast<int32_t>(q[0] | (q[1] << 8));
  return static_cast<int32_t>(static_cast<uint32_t>(q[0]) | (static_cast<uint32_t>(q[1]) << 8) |
                              (static_cast<uint32_t>(q[2]) << 16) | (static_cast<uint32_t>(q[3]) << 24));
}

using tg::kFnvOffset;
using tg::kFnvPrime;

[[noreturn]] void bad_file(const std::string& path, const std::string& what) {
  throw tg::DataError("token file " + path + ": " + what + "; regenerate it with tapegpt prepare");
}

}  // namespace

int token_width_for_vocab(int64_t vocab_size) { return vocab_size <= 65536 ? 2 : 4; }

void token_file_header(unsigned char out[kTokenFileHeaderBytes], int64_t n, int64_t vocab_size) {
  std::memset(out, 0, kTokenFileHeaderBytes);
  std::memcpy(out, kTokenFileMagic, 8);
  put_le(out + 8, kTokenFileVersion, 4);
  put_le(out + 12, static_cast<uint64_t>(token_width_for_vocab(vocab_size)), 4);
  put_le(out + 16, static_cast<uint64_t>(n), 8);
  put_le(out + 24, static_cast<uint64_t>(vocab_size), 4);
}

void token_file_write(const std::string& path, const int32_t* tokens, int64_t n, int64_t vocab_size) {
  tg::AtomicFile file(path);
  token_file_write_to(file, path, tokens, n, vocab_size);
  file.commit();
}

void token_file_write_to(tg::AtomicFile& file, const std::string& path, const int32_t* tokens, int64_t n,
                         int64_t vocab_size) {
  if (vocab_size < 1 || vocab_size > INT32_MAX) {
    throw tg::DataError("cannot write " + path + ": vocabulary size " + std::to_string(vocab_size) +
                        " does not fit a token file (1 .. 2^31-1)");
  }
  const int width = token_width_for_vocab(vocab_size);
  unsigned char header[kTokenFileHeaderBytes];
  token_file_header(header, n, vocab_size);

  file.write(header, sizeof header);
  constexpr int64_t kBlock = 1 << 16;
  std::vector<unsigned char> block(static_cast<size_t>(kBlock * width));
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t m = std::min(kBlock, n - start);
    for (int64_t i = 0; i < m; ++i) {
      const int32_t t = tokens[start + i];
      if (t < 0 || t >= vocab_size) {
        throw tg::DataError("cannot write " + path + ": token " + std::to_string(t) + " at position " +
                            std::to_string(start + i) + " is outside the vocabulary of " +
                            std::to_string(vocab_size));
      }
      put_le(block.data() + i * width, static_cast<uint32_t>(t), width);
    }
    file.write(block.data(), static_cast<size_t>(m * width));
  }
}

TokenFile::TokenFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw tg::DataError("cannot open token file " + path + " (" + std::strerror(errno) +
                        "); run tapegpt prepare to create it, or check --data");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    bad_file(path, "not a regular file");
  }
  const auto file_bytes = static_cast<uint64_t>(st.st_size);
  if (file_bytes < static_cast<uint64_t>(kTokenFileHeaderBytes)) {
    ::close(fd);
    bad_file(path, "truncated: " + std::to_string(file_bytes) + " bytes is shorter than the 32-byte header");
  }
  void* map = ::mmap(nullptr, file_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);  // the mapping keeps the file open
  if (map == MAP_FAILED) {
    throw tg::DataError("cannot memory-map token file " + path + " (" + std::strerror(map_errno) + ")");
  }
  map_ = static_cast<const unsigned char*>(map);
  map_bytes_ = file_bytes;
  try {
    if (std::memcmp(map_, kTokenFileMagic, 8) != 0) bad_file(path, "bad magic, not a tapegpt token file");
    const uint64_t version = get_le(map_ + 8, 4);
    if (version != kTokenFileVersion) {
      bad_file(path, "format version " + std::to_string(version) + ", but this tapegpt reads version " +
                         std::to_string(kTokenFileVersion));
    }
    const uint64_t width = get_le(map_ + 12, 4);
    if (width != 2 && width != 4) bad_file(path, "bytes per token is " + std::to_string(width) + ", not 2 or 4");
    const uint64_t count = get_le(map_ + 16, 8);
    const uint64_t vocab = get_le(map_ + 24, 4);
    if (vocab < 1 || vocab > static_cast<uint64_t>(INT32_MAX)) bad_file(path, "vocabulary size " + std::to_string(vocab) + " is invalid");
    if (width == 2 && vocab > 65536) bad_file(path, "vocabulary of " + std::to_string(vocab) + " cannot fit 2-byte tokens");
    if (get_le(map_ + 28, 4) != 0) bad_file(path, "reserved header field is not 0");
    const uint64_t data_bytes = file_bytes - kTokenFileHeaderBytes;
    if (count > data_bytes / width || count * width != data_bytes) {
      bad_file(path, "header says " + std::to_string(count) + " tokens of " + std::to_string(width) +
                         " bytes, but the file holds " + std::to_string(data_bytes) +
                         " bytes of tokens (truncated or padded)");
    }
    width_ = static_cast<int>(width);
    count_ = static_cast<int64_t>(count);
    vocab_size_ = static_cast<int32_t>(vocab);
    tokens_ = map_ + kTokenFileHeaderBytes;

    // One pass: hash every byte and check every id.
    uint64_t h = kFnvOffset;
    for (int64_t i = 0; i < kTokenFileHeaderBytes; ++i) h = (h ^ map_[i]) * kFnvPrime;
    for (int64_t i = 0; i < count_; ++i) {
      const unsigned char* q = tokens_ + i * width_;
      for (int k = 0; k < width_; ++k) h = (h ^ q[k]) * kFnvPrime;
      const int32_t t = token_at(tokens_, width_, i);
      if (t < 0 || t >= vocab_size_) {
        bad_file(path, "token " + std::to_string(static_cast<uint32_t>(t)) + " at position " + std::to_string(i) +
                           " is not below the vocabulary size " + std::to_string(vocab_size_));
      }
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016" PRIx64, h);
    hash_ = hex;
  } catch (...) {
    unmap();
    throw;
  }
}

TokenFile::~TokenFile() { unmap(); }

void TokenFile::unmap() {
  if (map_ != nullptr) ::munmap(const_cast<unsigned char*>(map_), map_bytes_);
  map_ = nullptr;
  tokens_ = nullptr;
  map_bytes_ = 0;
}

TokenFile::TokenFile(TokenFile&& other) noexcept { *this = std::move(other); }

TokenFile& TokenFile::operator=(TokenFile&& other) noexcept {
  if (this != &other) {
    unmap();
    path_ = std::move(other.path_);
    map_ = other.map_;
    map_bytes_ = other.map_bytes_;
    tokens_ = other.tokens_;
    count_ = other.count_;
    vocab_size_ = other.vocab_size_;
    width_ = other.width_;
    hash_ = std::move(other.hash_);
    other.map_ = nullptr;
    other.tokens_ = nullptr;
    other.map_bytes_ = 0;
    other.count_ = 0;
  }
  return *this;
}

int32_t TokenFile::operator[](int64_t i) const {
  TG_CHECK(i >= 0 && i < count_);
  return token_at(tokens_, width_, i);
}

void TokenFile::copy(int32_t* dst, int64_t start, int64_t n) const {
  TG_CHECK(start >= 0 && n >= 0 && start <= count_ && n <= count_ - start);
  for (int64_t i = 0; i < n; ++i) dst[i] = token_at(tokens_, width_, start + i);
}

}  // namespace data
