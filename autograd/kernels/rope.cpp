// Rotary position embedding (RoPE) kernels on the q and k parts of qkv[B,T,3C].
//
// Note [RoPE angles]
// The angle of pair i at position p is p·θ_i, θ_i = 10000^(-2i/HS), formed
// and passed through cos and sin in double, then rounded to float: the
// rotation is the exact one to within float's rounding whatever p (a float
// angle near 4096 would already carry up to 2⁻¹² of rounding error), and
// the result does not depend on which libm path (scalar or vector) a
// compiler picks. Each position's cos and sin are shared by all B rows, by
// q and k and by every head, so the kernels run over positions and compute
// them once per position, kChunk frequencies at a time into stack arrays
// (no heap allocation); the rotation loops over i are then contiguous and
// vectorise.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "autograd/base/check.h"
#include "autograd/kernels/kernels.h"

namespace kernels {

namespace {

constexpr int64_t kChunk = 64;

// cs[j], sn[j] = cos, sin of pos·θ_{i0+j} for j < m (Note [RoPE angles]).
void rope_angles(float* cs, float* sn, int64_t pos, int64_t i0, int64_t m, int64_t HS) {
  for (int64_t j = 0; j < m; ++j) {
    const double theta =
        std::pow(10000.0, -2.0 * static_cast<double>(i0 + j) / static_cast<double>(HS));
    const double angle = static_cast<double>(pos) * theta;
    cs[j] = static_cast<float>(std::cos(angle));
    sn[j] = static_cast<float>(std::sin(angle));
  }
}

// Position t of every row: the q and k pairs of src rotated by their angle
// into dst (forward: overwrites), or rotated back and added into dst
// (backward: the transpose of [[cos, -sin], [sin, cos]]). In place
// (dst == src, forward only) each x, y is read before its slot is written.
template <bool kBackward>
void rotate_position(float* dst, const float* src, int64_t t, int64_t B, int64_t T, int64_t C,
                     int64_t NH, int64_t pos0) {
  const int64_t HS = C / NH, half = HS / 2, C3 = 3 * C;
  float cs[kChunk], sn[kChunk];
  for (int64_t i0 = 0; i0 < half; i0 += kChunk) {
    const int64_t m = std::min(kChunk, half - i0);
    rope_angles(cs, sn, pos0 + t, i0, m, HS);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < 2 * NH; ++h) {  // q's heads, then k's (k starts at channel C)
        const float* s = src + (b * T + t) * C3 + h * HS + i0;
        float* d = dst + (b * T + t) * C3 + h * HS + i0;
        for (int64_t j = 0; j < m; ++j) {
          const float x = s[j], y = s[j + half];
          if constexpr (kBackward) {
            d[j] += x * cs[j] + y * sn[j];
            d[j + half] += y * cs[j] - x * sn[j];
          } else {
            d[j] = x * cs[j] - y * sn[j];
            d[j + half] = x * sn[j] + y * cs[j];
          }
        }
      }
  }
}

}  // namespace

void rope_forward(float* out, const float* qkv, int64_t B, int64_t T, int64_t C, int64_t NH,
                  int64_t pos0) {
  TG_CHECK((C / NH) * NH == C && (C / NH) % 2 == 0);
  const int64_t C3 = 3 * C;
#pragma omp parallel for schedule(static) if (B * T * C > 16384)
  for (int64_t t = 0; t < T; ++t) {
    rotate_position<false>(out, qkv, t, B, T, C, NH, pos0);
    if (out != qkv)  // v unchanged
      for (int64_t b = 0; b < B; ++b)
        std::memcpy(out + (b * T + t) * C3 + 2 * C, qkv + (b * T + t) * C3 + 2 * C,
                    static_cast<size_t>(C) * sizeof(float));
  }
}

void rope_backward(float* dqkv, const float* dout, int64_t B, int64_t T, int64_t C, int64_t NH,
                   int64_t pos0) {
  TG_CHECK((C / NH) * NH == C && (C / NH) % 2 == 0);
  const int64_t C3 = 3 * C;
#pragma omp parallel for schedule(static) if (B * T * C > 16384)
  for (int64_t t = 0; t < T; ++t) {
    rotate_position<true>(dqkv, dout, t, B, T, C, NH, pos0);
    for (int64_t b = 0; b < B; ++b) {  // v's gradient passes through
      const float* d = dout + (b * T + t) * C3 + 2 * C;
      float* dv = dqkv + (b * T + t) * C3 + 2 * C;
      for (int64_t c = 0; c < C; ++c) dv[c] += d[c];
    }
  }
}

}  // namespace kernels
