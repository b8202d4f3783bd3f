// The per-thread chunk cache (see chunk_cache.h): linear probing over a
// power-of-two table at most half full, keys and ids in two flat arenas.
#include "data/chunk_cache.h"

#include <cstring>

namespace data {

ChunkCache::ChunkCache(size_t max_entries) : max_entries_(max_entries) {
  size_t cap = 16;
  while (cap < 2 * max_entries_) cap *= 2;
  slots_.assign(cap, 0);
  entries_.reserve(max_entries_);
}

uint64_t ChunkCache::hash_of(std::string_view s) {
  // FNV-1a: chunks are a few bytes long, where it is as fast as anything.
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

const int32_t* ChunkCache::find(std::string_view chunk, size_t& n) const {
  if (chunk.size() > kMaxChunkBytes) return nullptr;
  const uint64_t h = hash_of(chunk);
  const size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const uint32_t s = slots_[i];
    if (s == 0) return nullptr;
    const Entry& e = entries_[s - 1];
    if (e.hash == h && e.key_len == chunk.size() && std::memcmp(keys_.data() + e.key_begin, chunk.data(), chunk.size()) == 0) {
      n = e.ids_len;
      return ids_.data() + e.ids_begin;
    }
  }
}

void ChunkCache::insert(std::string_view chunk, const int32_t* ids, size_t n) {
  if (chunk.size() > kMaxChunkBytes) return;
  if (entries_.size() >= max_entries_) {
    entries_.clear();
    keys_.clear();
    ids_.clear();
    std::fill(slots_.begin(), slots_.end(), 0);
  }
  const uint64_t h = hash_of(chunk);
  entries_.push_back({h, static_cast<uint32_t>(keys_.size()), static_cast<uint32_t>(chunk.size()),
                      static_cast<uint32_t>(ids_.size()), static_cast<uint32_t>(n)});
  keys_.append(chunk);
  ids_.insert(ids_.end(), ids, ids + n);
  const size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  while (slots_[i] != 0) i = (i + 1) & mask;
  slots_[i] = static_cast<uint32_t>(entries_.size());
}

}  // namespace data
