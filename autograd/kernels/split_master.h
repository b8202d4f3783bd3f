// A float32 master weight stored as two 16-bit planes: its bf16 copy and
// its low half. Conventions as Note [Kernel conventions] in kernels.h.
//
// Note [Split master weights]
// - A bf16 run multiplies each weight's bf16 copy and updates its float32
//   master. Kept side by side they take 6 bytes a weight; split, 4, as in a
//   float32 run: the copy is the high plane `hi` (float_to_bf16 of the
//   master, to nearest, ties to even) and the master's own low 16 bits are
//   the low plane `lo`.
// - Rounding to nearest either kept the master's high half (lo ≤ 0x8000) or
//   added one to it (lo > 0x8000), so join_master gets the master back from
//   the two halves exactly, but for one case: a master exactly halfway
//   (lo = 0x8000) whose high half is odd rounds up, and would read back as
//   the value below. split_master moves such a master one float32 unit in
//   the last place towards its copy (lo 0x8001) before splitting: the copy
//   is unchanged, and the master is off by one unit in 2^24 in one update
//   of about 2^17. Runs stay exact (same seed, same bits); a bf16 run's
//   masters are those nudged float32 values.
// - ±Inf and values that round to ±Inf read back exactly; NaN stays NaN.
// - A buffer of n float32 masters becomes, in place, n `hi` values then n
//   `lo` values (split_master_in_place): the matmuls read a weight's copy
//   as a plain bf16 matrix at hi + offset.
#pragma once

#include <cstdint>
#include <cstring>

#include "autograd/kernels/bf16.h"

namespace kernels {

// The bits of master x as split_master stores them (nudged), and its two
// planes; on bits, so that the update loops vectorise.
inline uint32_t master_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u + ((u & 0x1ffffu) == 0x18000u ? 1u : 0u);  // halfway, kept half odd (rounding up): nudge
}
inline uint16_t master_hi(uint32_t bits) { return float_bits_to_bf16(bits); }
inline uint16_t master_lo(uint32_t bits) { return static_cast<uint16_t>(bits & 0xffffu); }

// The high and low planes of master x (Note [Split master weights]).
inline void split_master(float x, uint16_t* hi, uint16_t* lo) {
  const uint32_t u = master_bits(x);
  *hi = master_hi(u);
  *lo = master_lo(u);
}

// The master that split_master made hi and lo of.
inline float join_master(uint16_t hi, uint16_t lo) {
  const uint32_t upper = (static_cast<uint32_t>(hi) - (lo > 0x8000u ? 1u : 0u)) & 0xffffu;
  const uint32_t u = (upper << 16) | lo;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// A table whose float32 values are read one by one: `data`, or split masters
// (hi, lo); undefined when all are null. For the embedding tables.
struct MasterValues {
  const float* data = nullptr;
  const uint16_t* hi = nullptr;
  const uint16_t* lo = nullptr;
  bool defined() const { return data != nullptr || hi != nullptr; }
  float operator[](int64_t i) const { return data ? data[i] : join_master(hi[i], lo[i]); }
  // The values from the k-th on.
  MasterValues from(int64_t k) const {
    return data ? MasterValues{data + k} : hi ? MasterValues{nullptr, hi + k, lo + k} : MasterValues{};
  }
};

// out[i] = join_master(hi[i], lo[i]), for i < n: a split store's masters
// read out.
void join_master(float* out, const uint16_t* hi, const uint16_t* lo, int64_t n);

// In place: the n floats at buf become n hi values then n lo values (the
// first 2n bytes and the next 2n), and back. join after split gives the
// masters back (nudged as above); split after join gives the same planes.
// No allocation beyond a fixed scratch of 256 KiB.
void split_master_in_place(float* buf, int64_t n);
void join_master_in_place(float* buf, int64_t n);

}  // namespace kernels
