// Token + position embedding kernels (gather forward, scatter-add backward).
#include <algorithm>

#include "autograd/kernels/kernels.h"
#include "autograd/kernels/split_master.h"

namespace kernels {

void embedding_forward(float* out, const int32_t* ids, MasterValues wte, MasterValues wpe, int64_t B,
                       int64_t T, int64_t C) {
#pragma omp parallel for schedule(static) if (B * T * C > 32768)
  for (int64_t bt = 0; bt < B * T; ++bt) {
    const int64_t t = bt % T;
    const int64_t tok = static_cast<int64_t>(ids[bt]) * C;
    float* o = out + bt * C;
    if (!wpe.defined()) {  // no position table (RoPE rotates q and k instead)
      for (int64_t c = 0; c < C; ++c) o[c] = wte[tok + c];
      continue;
    }
    for (int64_t c = 0; c < C; ++c) o[c] = wte[tok + c] + wpe[t * C + c];
  }
}

void embedding_forward(float* out, const int32_t* ids, const float* wte, const float* wpe, int64_t B,
                       int64_t T, int64_t C) {
  embedding_forward(out, ids, MasterValues{wte}, MasterValues{wpe}, B, T, C);
}

void embedding_backward(float* dwte, float* dwpe, const float* dout, const int32_t* ids,
                        int64_t B, int64_t T, int64_t C) {
  // Two positions may hold the same token, so rows of dwte would race.
  // Threads instead own disjoint channel blocks and walk all positions in
  // order: no races, and a fixed summation order.
  constexpr int64_t kBlock = 64;
  const int64_t n_blocks = (C + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (B * T * C > 32768)
  for (int64_t blk = 0; blk < n_blocks; ++blk) {
    const int64_t c0 = blk * kBlock, c1 = std::min(C, c0 + kBlock);
    for (int64_t bt = 0; bt < B * T; ++bt) {
      const float* d = dout + bt * C;
      if (dwte) {
        float* dt = dwte + static_cast<int64_t>(ids[bt]) * C;
        for (int64_t c = c0; c < c1; ++c) dt[c] += d[c];
      }
      if (dwpe) {
        float* dp = dwpe + (bt % T) * C;
        for (int64_t c = c0; c < c1; ++c) dp[c] += d[c];
      }
    }
  }
}

}  // namespace kernels
