// The naive causal multi-head self-attention pair (see attention_naive.h):
// for each (batch, head) the score and value products are cblas_sgemm calls
// over strided views of qkv, and the T×T probabilities are kept.
#include <cblas.h>

#include <cmath>
#include <vector>

#include "autograd/kernels/attention_naive.h"
#include "autograd/kernels/blas_setup.h"
#include "autograd/kernels/dropout_mask.h"

namespace kernels {

namespace {

// Row-wise causal softmax in place: row t keeps columns 0…t, and columns
// t+1…T-1 are set to exactly 0 (the -∞ mask applied before the softmax).
void causal_softmax_rows(float* s, int64_t T) {
  for (int64_t t = 0; t < T; ++t) {
    float* row = s + t * T;
    float mx = row[0];
    for (int64_t j = 1; j <= t; ++j) mx = row[j] > mx ? row[j] : mx;
    float sum = 0.0f;
    for (int64_t j = 0; j <= t; ++j) {
      row[j] = std::exp(row[j] - mx);
      sum += row[j];
    }
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j <= t; ++j) row[j] *= inv;
    for (int64_t j = t + 1; j < T; ++j) row[j] = 0.0f;
  }
}

// dst[T,T] = src ⊙ M / (1 - p), M the mask of Note [Attention dropout] for
// the (b, h) pair bh.
void drop_probabilities(float* dst, const float* src, int64_t bh, int64_t T, float p,
                        uint64_t seed) {
  const uint64_t threshold = dropout_threshold(p);
  const float keep_scale = 1.0f / (1.0f - p);
  for (int64_t i = 0; i < T * T; ++i)
    dst[i] = dropout_keep(seed, bh * T * T + i, threshold) ? src[i] * keep_scale : 0.0f;
}

}  // namespace

void attention_naive_forward(float* out, float* att, const float* qkv, int64_t B, int64_t T,
                             int64_t C, int64_t NH, float dropout_p, uint64_t seed) {
  const int64_t HS = C / NH, C3 = 3 * C;
  const float scale = 1.0f / std::sqrt(static_cast<float>(HS));
  // One (b, h) pair per task; OpenBLAS runs single-threaded inside the
  // parallel region, so there is one pool doing the work at a time (one
  // thread with OpenBLAS's serial build: Note [OpenBLAS builds]).
#pragma omp parallel for schedule(static) if (B * NH > 1 && blas_calls_may_overlap())
  for (int64_t bh = 0; bh < B * NH; ++bh) {
    const int64_t b = bh / NH, h = bh % NH;
    const float* q = qkv + b * T * C3 + h * HS;
    const float* k = q + C;
    const float* v = q + 2 * C;
    float* s = att + bh * T * T;
    // s[T,T] = q·kᵀ/√HS
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, HS, scale, q, C3, k, C3, 0.0f,
                s, T);
    causal_softmax_rows(s, T);
    // With dropout, v is weighted by a dropped copy (the naive kernel is the
    // oracle and benchmark baseline: a heap buffer here is fine).
    std::vector<float> dropped(dropout_p > 0.0f ? static_cast<size_t>(T * T) : 0);
    if (dropout_p > 0.0f) drop_probabilities(dropped.data(), s, bh, T, dropout_p, seed);
    const float* w = dropout_p > 0.0f ? dropped.data() : s;
    // out[b, :, h·HS…] = w·v
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, HS, T, 1.0f, w, T, v, C3, 0.0f,
                out + b * T * C + h * HS, C);
  }
}

void attention_naive_backward(float* dqkv, float* scratch, const float* dout, const float* qkv,
                              const float* att, int64_t B, int64_t T, int64_t C, int64_t NH,
                              float dropout_p, uint64_t seed) {
  const int64_t HS = C / NH, C3 = 3 * C;
  const bool drop = dropout_p > 0.0f;
  const uint64_t threshold = dropout_threshold(dropout_p);
  const float keep_scale = drop ? 1.0f / (1.0f - dropout_p) : 1.0f;
  const float scale = 1.0f / std::sqrt(static_cast<float>(HS));
#pragma omp parallel for schedule(static) if (B * NH > 1 && blas_calls_may_overlap())
  for (int64_t bh = 0; bh < B * NH; ++bh) {
    const int64_t b = bh / NH, h = bh % NH;
    const float* q = qkv + b * T * C3 + h * HS;
    const float* k = q + C;
    const float* v = q + 2 * C;
    float* dq = dqkv + b * T * C3 + h * HS;
    float* dk = dq + C;
    float* dv = dq + 2 * C;
    const float* a = att + bh * T * T;
    const float* d = dout + b * T * C + h * HS;
    float* ds = scratch + bh * T * T;
    // datt = dout·vᵀ;  dv += attᵀ·dout (att as dropped in the forward)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, HS, 1.0f, d, C, v, C3, 0.0f, ds,
                T);
    std::vector<float> dropped(drop ? static_cast<size_t>(T * T) : 0);
    if (drop) {
      drop_probabilities(dropped.data(), a, bh, T, dropout_p, seed);
      // datt of the undropped probabilities: through the mask and scale.
      for (int64_t i = 0; i < T * T; ++i)
        ds[i] = dropout_keep(seed, bh * T * T + i, threshold) ? ds[i] * keep_scale : 0.0f;
    }
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, HS, T, 1.0f, drop ? dropped.data() : a,
                T, d, C, 1.0f, dv, C3);
    // Softmax backward per row: ds = att ⊙ (datt - Σ_j att·datt). Masked
    // entries have att = 0 and so get ds = 0: no gradient flows to the future.
    for (int64_t t = 0; t < T; ++t) {
      float* row = ds + t * T;
      const float* arow = a + t * T;
      float dot = 0.0f;
      for (int64_t j = 0; j <= t; ++j) dot += arow[j] * row[j];
      for (int64_t j = 0; j <= t; ++j) row[j] = arow[j] * (row[j] - dot);
      for (int64_t j = t + 1; j < T; ++j) row[j] = 0.0f;
    }
    // dq += ds·k/√HS;  dk += dsᵀ·q/√HS
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, HS, T, scale, ds, T, k, C3, 1.0f,
                dq, C3);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, HS, T, scale, ds, T, q, C3, 1.0f,
                dk, C3);
  }
}

}  // namespace kernels
