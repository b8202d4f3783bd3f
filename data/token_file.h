// Token files (train.bin, val.bin): a small header then the token ids,
// written atomically and read back by memory-mapping.
//
// Note [Token file format], all integers little-endian, 32-byte header:
//   offset  size  field
//        0     8  magic "TGTOKENS"
//        8     4  version (1)
//       12     4  bytes per token: 2 (uint16, vocab_size <= 65536) or 4 (uint32)
//       16     8  token count N
//       24     4  vocab size V (every token id is < V)
//       28     4  reserved, 0
//       32  N*w   the tokens
// The file length must be exactly 32 + N * (bytes per token).
#pragma once

#include <cstdint>
#include <string>

namespace tg {
class AtomicFile;
}

namespace data {

constexpr char kTokenFileMagic[8] = {'T', 'G', 'T', 'O', 'K', 'E', 'N', 'S'};
constexpr uint32_t kTokenFileVersion = 1;
constexpr int64_t kTokenFileHeaderBytes = 32;

// 2 when every id fits in uint16 (vocab_size <= 65536), else 4.
int token_width_for_vocab(int64_t vocab_size);

// Writes `n` tokens to `path` atomically (AtomicFile). Throws tg::DataError on
// any failure (leaving an existing file intact and no temporary file), when
// vocab_size is outside [1, 2^31) or when a token is outside [0, vocab_size).
void token_file_write(const std::string& path, const int32_t* tokens, int64_t n, int64_t vocab_size);
// The 32-byte header of a file of n tokens (vocab_size in [1, 2^31)).
void token_file_header(unsigned char out[kTokenFileHeaderBytes], int64_t n, int64_t vocab_size);
// The same into an open tg::AtomicFile, which the caller finishes and publishes.
void token_file_write_to(tg::AtomicFile& file, const std::string& path, const int32_t* tokens, int64_t n,
                         int64_t vocab_size);

// A read-only, memory-mapped token file, validated on open as untrusted: the
// magic, version, token width, length against the count, and (in one pass,
// which also hashes the file) every id against the vocabulary size.
class TokenFile {
 public:
  // Throws tg::DataError naming the file and what is wrong with it.
  explicit TokenFile(const std::string& path);
  ~TokenFile();
  TokenFile(TokenFile&& other) noexcept;
  TokenFile& operator=(TokenFile&& other) noexcept;
  TokenFile(const TokenFile&) = delete;
  TokenFile& operator=(const TokenFile&) = delete;

  int64_t size() const { return count_; }          // number of tokens
  int32_t vocab_size() const { return vocab_size_; }
  int bytes_per_token() const { return width_; }
  const std::string& path() const { return path_; }
  // 64-bit FNV-1a of the whole file as 16 hex digits: a checkpoint stores it
  // to notice a resume on different data.
  const std::string& hash() const { return hash_; }

  int32_t operator[](int64_t i) const;  // 0 <= i < size()
  // dst[0..n) = tokens [start, start + n), which must lie inside the file
  // (a caller's bug otherwise: TG_CHECK).
  void copy(int32_t* dst, int64_t start, int64_t n) const;

 private:
  void unmap();

  std::string path_;
  const unsigned char* map_ = nullptr;  // the whole file
  size_t map_bytes_ = 0;
  const unsigned char* tokens_ = nullptr;
  int64_t count_ = 0;
  int32_t vocab_size_ = 0;
  int width_ = 2;
  std::string hash_;
};

}  // namespace data
