// FNV-1a, the one small non-cryptographic hash every folder uses: the token
// files' data hash (saved in checkpoints, so its value must never change),
// the replicas' weight checksums and the setup fingerprint of data-parallel
// runs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tg {

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr uint64_t kFnvPrime = 0x100000001b3ULL;

// Hashes n bytes, continuing from h (kFnvOffset to start).
inline uint64_t fnv1a(const void* bytes, size_t n, uint64_t h = kFnvOffset) {
  const unsigned char* p = static_cast<const unsigned char*>(bytes);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * kFnvPrime;
  return h;
}

}  // namespace tg
