// The per-thread chunk cache (see chunk_cache.h): linear probing over a
// power-of-two table at most half full, keys and ids in two flat arenas.
#include "data/chunk_cache.h"

#include <algorithm>
#include <cstring>

namespace data {

ChunkCache::ChunkCache(size_t max_entries) : max_entries_(max_entries) {
  size_t cap = 16;
  while (cap < 2 * max_entries_) cap *= 2;
  slots_.assign(cap, Slot{0, 0, 0});
}

uint64_t ChunkCache::mix(uint64_t x) {
  x = (x ^ (x >> 31)) * 0xFF51AFD7ED558CCDULL;
  return x ^ (x >> 29);
}

uint64_t ChunkCache::pack(std::string_view s) {
  uint64_t w = 0;
  std::memcpy(&w, s.data(), s.size());  // s.size() <= 8
  return w;
}

uint64_t ChunkCache::hash_of(std::string_view s) {
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) h = mix(h ^ pack(s.substr(i, 8)));
  return mix(h ^ pack(s.substr(i)));
}

const int32_t* ChunkCache::find(std::string_view chunk, size_t& n) const {
  if (chunk.size() > kMaxChunkBytes || chunk.empty()) return nullptr;
  const bool short_key = chunk.size() <= 8;
  const uint64_t key = short_key ? pack(chunk) : hash_of(chunk);
  const size_t mask = slots_.size() - 1;
  for (size_t i = mix(key + chunk.size()) & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.len == 0) return nullptr;
    if (s.key != key || (s.len & ~kInlineId) != chunk.size()) continue;
    if (s.len & kInlineId) {
      n = 1;
      return &s.value;
    }
    const Entry& e = entries_[static_cast<size_t>(s.value)];
    if (short_key || std::memcmp(keys_.data() + e.key_begin, chunk.data(), chunk.size()) == 0) {
      n = e.ids_len;
      return ids_.data() + e.ids_begin;
    }
  }
}

void ChunkCache::insert(std::string_view chunk, const int32_t* ids, size_t n) {
  if (chunk.size() > kMaxChunkBytes || chunk.empty()) return;
  if (size_ >= max_entries_) {
    size_ = 0;
    entries_.clear();
    keys_.clear();
    ids_.clear();
    std::fill(slots_.begin(), slots_.end(), Slot{0, 0, 0});
  }
  const bool short_key = chunk.size() <= 8;
  const uint64_t key = short_key ? pack(chunk) : hash_of(chunk);
  Slot slot{key, static_cast<uint32_t>(chunk.size()), 0};
  if (short_key && n == 1) {
    slot.len |= kInlineId;
    slot.value = ids[0];
  } else {
    slot.value = static_cast<int32_t>(entries_.size());
    entries_.push_back({static_cast<uint32_t>(keys_.size()), static_cast<uint32_t>(chunk.size()),
                        static_cast<uint32_t>(ids_.size()), static_cast<uint32_t>(n)});
    if (!short_key) keys_.append(chunk);
    ids_.insert(ids_.end(), ids, ids + n);
  }
  const size_t mask = slots_.size() - 1;
  size_t i = mix(key + chunk.size()) & mask;
  while (slots_[i].len != 0) i = (i + 1) & mask;
  slots_[i] = slot;
  ++size_;
}

}  // namespace data
