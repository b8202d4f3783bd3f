// ChunkCache: encoded pre-tokenizer chunks by their bytes, for one thread.
// Text repeats its words, so BPE runs about once per distinct word; with
// one cache per thread, parallel encoding shares no lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace data {

class ChunkCache {
 public:
  // At most max_entries chunks of up to kMaxChunkBytes each; when full the
  // cache starts over empty (cheap, and frequent words come back at once).
  explicit ChunkCache(size_t max_entries = size_t{1} << 16);

  static constexpr size_t kMaxChunkBytes = 64;  // longer chunks are rare; not worth keeping

  // The ids of `chunk`, or nullptr; n is set to their number.
  const int32_t* find(std::string_view chunk, size_t& n) const;
  void insert(std::string_view chunk, const int32_t* ids, size_t n);

 private:
  struct Entry {
    uint64_t hash;
    uint32_t key_begin, key_len, ids_begin, ids_len;
  };
  static uint64_t hash_of(std::string_view s);
  size_t max_entries_;
  std::vector<uint32_t> slots_;  // open addressing: entry index + 1, 0 = empty
  std::vector<Entry> entries_;
  std::string keys_;
  std::vector<int32_t> ids_;
};

}  // namespace data
