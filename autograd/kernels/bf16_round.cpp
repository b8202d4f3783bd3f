// Rounding float32 to bf16, and what the CPU and the OS offer for AMX (bf16.h).

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cstring>

#include "autograd/kernels/bf16.h"

namespace kernels {

namespace {

void round_range(uint16_t* out, const float* in, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = float_to_bf16(in[i]);
}

void round_through_range(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = bf16_to_float(float_to_bf16(x[i]));
}

// f(begin, count) over [0, n) in pieces of 64K elements, in parallel when
// there is more than one. Elementwise work, so any split gives the same bits.
template <class F>
void in_pieces(int64_t n, F f) {
  constexpr int64_t kPiece = 65536;
  if (n <= kPiece) {
    f(0, n);
    return;
  }
  const int64_t pieces = (n + kPiece - 1) / kPiece;
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < pieces; ++p) f(p * kPiece, std::min(kPiece, n - p * kPiece));
}

}  // namespace

void round_to_bf16(uint16_t* out, const float* in, int64_t n) {
  in_pieces(n, [=](int64_t begin, int64_t count) { round_range(out + begin, in + begin, count); });
}

void round_through_bf16(float* x, int64_t n) {
  in_pieces(n, [=](int64_t begin, int64_t count) { round_through_range(x + begin, count); });
}

// Row by row; rows are independent, so any split gives the same bits.
void keep_qkv_v_bf16(float* qk, uint16_t* v_bf16, float* wide, const float* qkv, int64_t N, int64_t C) {
#pragma omp parallel for schedule(static) if (N * C > 65536)
  for (int64_t r = 0; r < N; ++r) {
    const float* in = qkv + r * 3 * C;
    float* w = wide + r * 3 * C;
    uint16_t* v = v_bf16 + r * C;
    std::memcpy(qk + r * 2 * C, in, static_cast<size_t>(2 * C) * sizeof(float));
    std::memcpy(w, in, static_cast<size_t>(2 * C) * sizeof(float));
    for (int64_t c = 0; c < C; ++c) {
      v[c] = float_to_bf16(in[2 * C + c]);
      w[2 * C + c] = bf16_to_float(v[c]);
    }
  }
}

void widen_kept_qkv(float* wide, const float* qk, const uint16_t* v_bf16, int64_t N, int64_t C) {
#pragma omp parallel for schedule(static) if (N * C > 65536)
  for (int64_t r = 0; r < N; ++r) {
    float* w = wide + r * 3 * C;
    const uint16_t* v = v_bf16 + r * C;
    std::memcpy(w, qk + r * 2 * C, static_cast<size_t>(2 * C) * sizeof(float));
    for (int64_t c = 0; c < C; ++c) w[2 * C + c] = bf16_to_float(v[c]);
  }
}

// Chunk j (kPiece floats) writes its bf16 values over floats [j/2 · kPiece,
// (j+1)/2 · kPiece): half of chunk ⌊j/2⌋, read in an earlier wave, and none
// of a chunk still to read, whose own values land over chunks 2j and 2j+1,
// later still. So chunks run in waves 0 | 1 | 2-3 | 4-7 | …, each wave in
// parallel; chunk 0 writes over itself, element i over bytes 2i..2i+1,
// which element i has read and no later element reads (the loop reads each
// float before it stores the bf16 that may overlap it).
uint16_t* round_to_bf16_in_place(float* buf, int64_t n) {
  constexpr int64_t kPiece = 65536;
  uint16_t* out = reinterpret_cast<uint16_t*>(buf);
  const int64_t chunks = (n + kPiece - 1) / kPiece;
  auto chunk = [&](int64_t j) {
    round_range(out + j * kPiece, buf + j * kPiece, std::min(kPiece, n - j * kPiece));
  };
  if (chunks > 0) chunk(0);
  for (int64_t first = 1; first < chunks; first *= 2) {
    const int64_t last = std::min(chunks, 2 * first);
#pragma omp parallel for schedule(static) if (last - first > 1)
    for (int64_t j = first; j < last; ++j) chunk(j);
  }
  return out;
}

bool cpu_has_amx_bf16() {
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  const unsigned amx_bf16 = 1u << 22, amx_tile = 1u << 24;  // CPUID.(7,0):EDX
  return (d & amx_bf16) && (d & amx_tile);
#else
  return false;
#endif
}

bool os_permits_amx() {
#if defined(__x86_64__) && defined(__linux__)
  // Linux 5.16+ hands out the 8 KiB of AMX tile state only on request.
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

bool amx_bf16_usable() {
  return bf16_matmul_available() && dnnl_effective_isa().find("amx") != std::string::npos &&
         cpu_has_amx_bf16() && os_permits_amx();
}

bool bf16_native() {
  if (!bf16_matmul_available()) return false;
  const std::string isa = dnnl_effective_isa();
  return isa == "avx512_core_bf16" || isa.find("amx") != std::string::npos;
}

}  // namespace kernels
