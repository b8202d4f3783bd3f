// Blockwise causal attention (Note [Flash attention] in attention_flash.h):
// online softmax over key blocks in the forward, recomputed probabilities in
// the backward, with every product one call of block_mac, the register-blocked
// micro-kernel of block_kernels.h, on blocks of at most 64×64 (Note
// [Attention micro-kernel] in block_kernels.cpp: the same fma chain per
// element as a plain loop, so the same bits), or in a bf16 run of
// block_mac_bf16 for all but the scores (Note [bf16 attention products]).
#include "autograd/kernels/attention_flash.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "autograd/kernels/bf16.h"
#include "autograd/kernels/block_kernels.h"
#include "autograd/kernels/block_kernels_bf16.h"
#include "autograd/kernels/dropout_mask.h"
#include "autograd/kernels/fast_math.h"
#include "autograd/kernels/reduce.h"

namespace kernels {

namespace {

// Query rows and key columns per block. A 64×64 float block is 16 KB, so the
// three the backward keeps (P, dP and a transposed k or v block) fit a 48 KB
// L1, and the few q, k, v rows being streamed stay in L2.
constexpr int64_t kBlock = 64;

// e^x for x ≤ 0 (every argument here is a score minus a running max or the
// log-sum): fast_exp (fast_math.h: Cephes' expf, about 1 ulp, no calls or
// branches, so the row loops vectorise where libm's expf would not) with the
// range clamped to [-87, 0]. Arguments below -87 give ~1e-38 instead of the
// exact tiny value: nothing next to the row's largest term, which is 1.
inline float exp_nonpositive(float x) {
  return fast_exp(x < -87.0f ? -87.0f : (x > 0.0f ? 0.0f : x));
}

// A row's sum of probabilities, in lanes (Note [Lane reductions]).
inline float row_sum(const float* x, int64_t n) {
  return lane_sum<16, float>(n, [x](int64_t j) { return x[j]; });
}

// s[i, j] = Σ_c q[i, c]·k[j, c] for i < mq, j < nk (s has row stride kBlock):
// k's rows are transposed into kt 64 channels at a time so that the product
// is block_mac's contiguous row form; each s element sums its channels in
// order 0, 1, …, HS-1 from 0. kt holds kBlock·kBlock floats.
void block_qkt(float* s, const float* q, int64_t ldq, const float* k, int64_t ldk, int64_t mq,
               int64_t nk, int64_t HS, float* kt) {
  for (int64_t i = 0; i < mq; ++i)
    for (int64_t j = 0; j < nk; ++j) s[i * kBlock + j] = 0.0f;
  for (int64_t c0 = 0; c0 < HS; c0 += kBlock) {
    const int64_t kc = HS - c0 < kBlock ? HS - c0 : kBlock;
    block_transpose(kt, kBlock, k + c0, ldk, nk, kc);
    block_mac(s, kBlock, q + c0, ldq, 1, kt, kBlock, mq, nk, kc);
  }
}

// Columns of key block j0 that query t may see: 0 … visible-1 (causal mask).
inline int64_t visible(int64_t t, int64_t j0, int64_t nk) {
  const int64_t n = t - j0 + 1;
  return n < 0 ? 0 : (n > nk ? nk : n);
}

// Note [bf16 attention products]
// In a bf16 run (attention_flash_forward_bf16, _backward_bf16) every product
// but the scores takes bf16 operands, as under PyTorch's autocast, with
// float32 sums (block_mac_bf16): P·v in the forward, and dout·vᵀ, Pᵀ·dout,
// dS·k and dSᵀ·q in the backward, where P, dS, v, dout, k and q are rounded
// to bf16 as operands only (what is stored, summed and returned stays
// float32). The scores q·kᵀ stay float32 in both passes: an error in a
// score goes through exp, and rounding q and k moved the demo's loss by
// +0.02 (Note [bf16 attention inputs] in autograd/ops/attention.cpp). Five
// of the seven block products of a step run at the bf16 dot-pair rate.
// The softmax's row term D = Σ dout·out takes dout rounded as dP's product
// does: with the float32 dout the rows of dS no longer summed to 0 and the
// worst gradient error of the kernel tests doubled (1.05% of the scale
// against 0.48%). The backward packs its head's k, q, dout and vᵀ once per task (a
// thread's buffers, grown to the largest head seen and kept, so later steps
// allocate nothing); P and dS are packed block by block as they are made.

// A thread's buffers for the bf16 products: `words` 32-bit words from the
// start, at least.
uint32_t* thread_words(int64_t words) {
  thread_local std::vector<uint32_t> buffer;
  if (static_cast<int64_t>(buffer.size()) < words) buffer.resize(static_cast<size_t>(words));
  return buffer.data();
}

template <bool kBf16>
void flash_forward(float* out, float* lse, const float* qkv, int64_t B, int64_t T, int64_t C, int64_t NH,
                   float dropout_p, uint64_t seed) {
  const int64_t HS = C / NH, C3 = 3 * C;
  const int64_t nqb = (T + kBlock - 1) / kBlock;
  const float scale = 1.0f / std::sqrt(static_cast<float>(HS));
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const bool drop = dropout_p > 0.0f;
  const uint64_t threshold = dropout_threshold(dropout_p);
  const float keep_scale = drop ? 1.0f / (1.0f - dropout_p) : 1.0f;
  // One task per (b, h, query block): each writes only its own rows of out
  // and lse, so tasks are independent and any schedule gives the same bits.
  // Query block qb costs qb+1 key blocks; handing out the costly ones first
  // balances the threads.
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t task = 0; task < B * NH * nqb; ++task) {
    const int64_t bh = task / nqb, qb = nqb - 1 - task % nqb;
    const int64_t b = bh / NH, h = bh % NH;
    const int64_t t0 = qb * kBlock, mq = T - t0 < kBlock ? T - t0 : kBlock;
    const float* q = qkv + (b * T + t0) * C3 + h * HS;
    // out's rows of this block are the accumulator O (ld = C), rescaled as
    // the running max grows and divided by the running sum at the end.
    float* o = out + (b * T + t0) * C + h * HS;
    float* row_lse = lse + bh * T + t0;
    alignas(64) float s[kBlock * kBlock], kt[kBlock * kBlock];
    alignas(64) uint16_t s_bf16[kBlock * kBlock];              // bf16 only: p's rows
    uint32_t* v_pairs = kBf16 ? thread_words(kBlock / 2 * HS) : nullptr;  // a key block of v
    float m[kBlock], l[kBlock];
    for (int64_t i = 0; i < mq; ++i) {
      m[i] = neg_inf;
      l[i] = 0.0f;
      for (int64_t c = 0; c < HS; ++c) o[i * C + c] = 0.0f;
    }
    // Key blocks up to and including the diagonal one; the rest are future.
    for (int64_t j0 = 0; j0 < t0 + mq; j0 += kBlock) {
      const int64_t nk = t0 + mq - j0 < kBlock ? t0 + mq - j0 : kBlock;
      const float* k = qkv + (b * T + j0) * C3 + C + h * HS;
      const float* v = k + C;
      block_qkt(s, q, C3, k, C3, mq, nk, HS, kt);  // s = q·kᵀ
      for (int64_t i = 0; i < mq; ++i) {
        float* srow = s + i * kBlock;
        const int64_t nv = visible(t0 + i, j0, nk);
        for (int64_t j = 0; j < nv; ++j) srow[j] *= scale;
        const float mx = lane_max(srow, nv, m[i]);
        // Online softmax: terms so far were exp(s - m[i]); rebase them on mx.
        // The first key block always holds column 0 ≤ t, so mx is finite
        // from then on and the first correction is exactly 0.
        const float corr = m[i] == neg_inf ? 0.0f : exp_nonpositive(m[i] - mx);
        for (int64_t j = 0; j < nv; ++j) srow[j] = exp_nonpositive(srow[j] - mx);
        for (int64_t j = nv; j < nk; ++j) srow[j] = 0.0f;  // masked: exactly 0
        m[i] = mx;
        l[i] = l[i] * corr + row_sum(srow, nv);
        // Dropout acts on what multiplies v, after the (undropped) row sum.
        if (drop) {
          const int64_t base = (bh * T + t0 + i) * T + j0;
          for (int64_t j = 0; j < nv; ++j)
            if (!dropout_keep(seed, base + j, threshold)) srow[j] = 0.0f;
        }
        if (corr != 1.0f)
          for (int64_t c = 0; c < HS; ++c) o[i * C + c] *= corr;
      }
      if (kBf16) {  // O += p·v on bf16 operands
        round_rows_bf16(s_bf16, kBlock, s, kBlock, mq, nk);
        pack_row_pairs(v_pairs, HS, v, C3, nk, HS);
        block_mac_bf16(o, C, reinterpret_cast<const uint32_t*>(s_bf16), kBlock / 2, 1, v_pairs, HS, mq, HS,
                       (nk + 1) / 2);
      } else {
        block_mac(o, C, s, kBlock, 1, v, C3, mq, HS, nk);  // O += p·v
      }
    }
    for (int64_t i = 0; i < mq; ++i) {
      const float inv = keep_scale / l[i];
      for (int64_t c = 0; c < HS; ++c) o[i * C + c] *= inv;
      row_lse[i] = m[i] + std::log(l[i]);
    }
  }
}

template <bool kBf16>
void flash_backward(float* dqkv, const float* dout, const float* out, const float* qkv, const float* lse,
                    int64_t B, int64_t T, int64_t C, int64_t NH, float dropout_p, uint64_t seed) {
  if (!dqkv) return;
  const int64_t HS = C / NH, C3 = 3 * C;
  const float scale = 1.0f / std::sqrt(static_cast<float>(HS));
  const bool drop = dropout_p > 0.0f;
  const uint64_t threshold = dropout_threshold(dropout_p);
  const float keep_scale = drop ? 1.0f / (1.0f - dropout_p) : 1.0f;
  // One task per (b, h): every dq, dk, dv element of that head belongs to it,
  // so no two threads write the same element and each element's sum runs
  // over blocks in the loop order below, whatever the thread count.
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t bh = 0; bh < B * NH; ++bh) {
    const int64_t b = bh / NH, h = bh % NH;
    const float* qh = qkv + b * T * C3 + h * HS;
    float* dqh = dqkv + b * T * C3 + h * HS;
    alignas(64) float p[kBlock * kBlock], dp[kBlock * kBlock], kt[kBlock * kBlock];
    float D[kBlock];
    // bf16 only (Note [bf16 attention products]): the head's k, q and dout
    // as row pairs [⌈T/2⌉, HS], dout's rows rounded [T, HSW pairs] and v's
    // transposed [HSW, T]; and a block's P and dS as the products want them.
    const int64_t TP = (T + 1) / 2, HSW = (HS + 1) / 2;
    uint32_t *k_pairs = nullptr, *q_pairs = nullptr, *d_pairs = nullptr, *d_rows = nullptr, *v_cols = nullptr;
    alignas(64) uint32_t p_pairs[kBlock / 2 * kBlock], ds_pairs[kBlock / 2 * kBlock];
    alignas(64) uint16_t ds_rows[kBlock * kBlock];
    if (kBf16) {
      k_pairs = thread_words(3 * TP * HS + 3 * T * HSW);
      q_pairs = k_pairs + TP * HS;
      d_pairs = q_pairs + TP * HS;
      d_rows = d_pairs + TP * HS;
      v_cols = d_rows + T * HSW;
      const float* dh = dout + b * T * C + h * HS;
      pack_row_pairs(k_pairs, HS, qh + C, C3, T, HS);
      pack_row_pairs(q_pairs, HS, qh, C3, T, HS);
      pack_row_pairs(d_pairs, HS, dh, C, T, HS);
      round_rows_bf16(reinterpret_cast<uint16_t*>(d_rows), 2 * HSW, dh, C, T, HS);
      // v's rows rounded, as pairs [T, HSW], then transposed word by word
      // (block_transpose only moves 32-bit words, whatever their bits).
      uint32_t* v_rows = v_cols + HSW * T;
      round_rows_bf16(reinterpret_cast<uint16_t*>(v_rows), 2 * HSW, qh + 2 * C, C3, T, HS);
      block_transpose(reinterpret_cast<float*>(v_cols), T, reinterpret_cast<const float*>(v_rows), HSW, T, HSW);
    }
    for (int64_t t0 = 0; t0 < T; t0 += kBlock) {
      const int64_t mq = T - t0 < kBlock ? T - t0 : kBlock;
      const float* q = qh + t0 * C3;
      float* dq = dqh + t0 * C3;
      const float* d = dout + (b * T + t0) * C + h * HS;
      const float* o = out + (b * T + t0) * C + h * HS;
      const float* row_lse = lse + bh * T + t0;
      // D_t = Σ dout·out, with dout as dP = dout·vᵀ takes it: in bf16 its
      // rounded value, so that Σ_j P·(dP - D) stays 0 up to float32 sums.
      for (int64_t i = 0; i < mq; ++i) {
        float acc = 0.0f;
        for (int64_t c = 0; c < HS; ++c) {
          const float dc = kBf16 ? bf16_to_float(float_to_bf16(d[i * C + c])) : d[i * C + c];
          acc += dc * o[i * C + c];
        }
        D[i] = acc;
      }
      for (int64_t j0 = 0; j0 < t0 + mq; j0 += kBlock) {
        const int64_t nk = t0 + mq - j0 < kBlock ? t0 + mq - j0 : kBlock;
        const float* k = qh + j0 * C3 + C;
        const float* v = k + C;
        float* dk = dqh + j0 * C3 + C;
        float* dv = dk + C;
        // p = exp(q·kᵀ·scale - lse), exactly 0 in the future;  dp = dout·vᵀ
        block_qkt(p, q, C3, k, C3, mq, nk, HS, kt);
        if (kBf16) {
          for (int64_t i = 0; i < mq; ++i)
            for (int64_t j = 0; j < nk; ++j) dp[i * kBlock + j] = 0.0f;
          block_mac_bf16(dp, kBlock, d_rows + t0 * HSW, HSW, 1, v_cols + j0, T, mq, nk, HSW);
        } else {
          block_qkt(dp, d, C, v, C3, mq, nk, HS, kt);
        }
        for (int64_t i = 0; i < mq; ++i) {
          float* prow = p + i * kBlock;
          float* dprow = dp + i * kBlock;
          const int64_t nv = visible(t0 + i, j0, nk);
          const float L = row_lse[i], Di = D[i];
          // dS·scale = P ⊙ (dP - D)·scale, stored over dp; masked entries
          // get P = dS = 0, so no gradient reaches a later position.
          if (!drop) {
            for (int64_t j = 0; j < nv; ++j) {
              prow[j] = exp_nonpositive(prow[j] * scale - L);
              dprow[j] = prow[j] * (dprow[j] - Di) * scale;
            }
          } else {
            // Note [Attention dropout]: dS = P⊙(dP⊙M·k - D), and p becomes
            // P⊙M·k, what multiplied v, for dv.
            const int64_t base = (bh * T + t0 + i) * T + j0;
            for (int64_t j = 0; j < nv; ++j) {
              const float P = exp_nonpositive(prow[j] * scale - L);
              const bool keep = dropout_keep(seed, base + j, threshold);
              dprow[j] = P * ((keep ? dprow[j] * keep_scale : 0.0f) - Di) * scale;
              prow[j] = keep ? P * keep_scale : 0.0f;
            }
          }
          for (int64_t j = nv; j < nk; ++j) prow[j] = dprow[j] = 0.0f;
        }
        // dv += pᵀ·dout;  dq += dS·k·scale;  dk += dSᵀ·q·scale
        if (kBf16) {
          const int64_t mp = (mq + 1) / 2, np = (nk + 1) / 2;
          pack_row_pairs(p_pairs, kBlock, p, kBlock, mq, nk);
          pack_row_pairs(ds_pairs, kBlock, dp, kBlock, mq, nk);
          round_rows_bf16(ds_rows, kBlock, dp, kBlock, mq, nk);
          block_mac_bf16(dv, C3, p_pairs, 1, kBlock, d_pairs + t0 / 2 * HS, HS, nk, HS, mp);
          block_mac_bf16(dq, C3, reinterpret_cast<const uint32_t*>(ds_rows), kBlock / 2, 1,
                         k_pairs + j0 / 2 * HS, HS, mq, HS, np);
          block_mac_bf16(dk, C3, ds_pairs, 1, kBlock, q_pairs + t0 / 2 * HS, HS, nk, HS, mp);
        } else {
          block_mac(dv, C3, p, 1, kBlock, d, C, nk, HS, mq);
          block_mac(dq, C3, dp, kBlock, 1, k, C3, mq, HS, nk);
          block_mac(dk, C3, dp, 1, kBlock, q, C3, nk, HS, mq);
        }
      }
    }
  }
}

}  // namespace

void attention_flash_forward(float* out, float* lse, const float* qkv, int64_t B, int64_t T, int64_t C,
                             int64_t NH, float dropout_p, uint64_t seed) {
  flash_forward<false>(out, lse, qkv, B, T, C, NH, dropout_p, seed);
}

void attention_flash_backward(float* dqkv, const float* dout, const float* out, const float* qkv,
                              const float* lse, int64_t B, int64_t T, int64_t C, int64_t NH, float dropout_p,
                              uint64_t seed) {
  flash_backward<false>(dqkv, dout, out, qkv, lse, B, T, C, NH, dropout_p, seed);
}

void attention_flash_forward_bf16(float* out, float* lse, const float* qkv, int64_t B, int64_t T, int64_t C,
                                  int64_t NH, float dropout_p, uint64_t seed) {
  flash_forward<true>(out, lse, qkv, B, T, C, NH, dropout_p, seed);
}

void attention_flash_backward_bf16(float* dqkv, const float* dout, const float* out, const float* qkv,
                                   const float* lse, int64_t B, int64_t T, int64_t C, int64_t NH,
                                   float dropout_p, uint64_t seed) {
  flash_backward<true>(dqkv, dout, out, qkv, lse, B, T, C, NH, dropout_p, seed);
}

void attention_flash_probs(float* att, const float* qkv, const float* lse, int64_t B,
                           int64_t T, int64_t C, int64_t NH) {
  const int64_t HS = C / NH, C3 = 3 * C;
  const float scale = 1.0f / std::sqrt(static_cast<float>(HS));
  const int64_t nqb = (T + kBlock - 1) / kBlock;
  // One task per (b, h, query block), each writing only its own rows of att;
  // the products and exponentials are the backward's, block for block.
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t task = 0; task < B * NH * nqb; ++task) {
    const int64_t bh = task / nqb, qb = task % nqb;
    const int64_t b = bh / NH, h = bh % NH;
    const int64_t t0 = qb * kBlock, mq = T - t0 < kBlock ? T - t0 : kBlock;
    const float* q = qkv + (b * T + t0) * C3 + h * HS;
    const float* row_lse = lse + bh * T + t0;
    float* a = att + (bh * T + t0) * T;
    alignas(64) float p[kBlock * kBlock], kt[kBlock * kBlock];
    for (int64_t i = 0; i < mq; ++i)
      for (int64_t j = t0 + i + 1; j < T; ++j) a[i * T + j] = 0.0f;  // the future
    for (int64_t j0 = 0; j0 < t0 + mq; j0 += kBlock) {
      const int64_t nk = t0 + mq - j0 < kBlock ? t0 + mq - j0 : kBlock;
      const float* k = qkv + (b * T + j0) * C3 + C + h * HS;
      block_qkt(p, q, C3, k, C3, mq, nk, HS, kt);
      for (int64_t i = 0; i < mq; ++i) {
        const int64_t nv = visible(t0 + i, j0, nk);
        for (int64_t j = 0; j < nv; ++j)
          a[i * T + j0 + j] = exp_nonpositive(p[i * kBlock + j] * scale - row_lse[i]);
      }
    }
    // Note [Renormalised probabilities]: every entry of a row shares lse's
    // rounding, up to half an ulp of |lse| (1e-6 relative at |lse| ≈ 16 and
    // 3e-6 measured at scores of order 30), which the backward does not
    // mind but which shows as rows summing to 1 ± 3e-6. Dividing by the
    // row's sum (in double) removes that shared factor; what is left is each
    // entry's own rounding.
    for (int64_t i = 0; i < mq; ++i) {
      float* row = a + i * T;
      double sum = 0.0;
      for (int64_t j = 0; j <= t0 + i; ++j) sum += row[j];
      const double inv = 1.0 / sum;
      for (int64_t j = 0; j <= t0 + i; ++j) row[j] = static_cast<float>(row[j] * inv);
    }
  }
}

}  // namespace kernels
