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
  explicit ChunkCache(size_t max_entries = size_t{1} << 15);

  static constexpr size_t kMaxChunkBytes = 64;  // longer chunks are rare; not worth keeping

  // The ids of `chunk`, or nullptr; n is set to their number.
  const int32_t* find(std::string_view chunk, size_t& n) const;
  void insert(std::string_view chunk, const int32_t* ids, size_t n);

 private:
  // A chunk of up to 8 bytes is its own key (its bytes packed into a word),
  // and when it encodes to one id (most words do) the id sits in the slot:
  // a hit then reads one slot and nothing else. Longer chunks are keyed by
  // their hash and compared against the key arena.
  struct Slot {
    uint64_t key;    // packed bytes (len <= 8) or hash
    uint32_t len;    // chunk length, kInlineId bit set when value is the id; 0 = empty
    int32_t value;   // the id, or index into entries_
  };
  struct Entry {
    uint32_t key_begin, key_len, ids_begin, ids_len;
  };
  static constexpr uint32_t kInlineId = 0x80000000u;
  static uint64_t hash_of(std::string_view s);
  static uint64_t pack(std::string_view s);
  static uint64_t mix(uint64_t x);
  size_t max_entries_;
  size_t size_ = 0;
  std::vector<Slot> slots_;  // open addressing, at most half full
  std::vector<Entry> entries_;
  std::string keys_;
  std::vector<int32_t> ids_;
};

}  // namespace data
