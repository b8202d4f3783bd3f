// Gradient-norm, scaling, AdamW and Muon kernels over the flat parameter
// buffers.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "autograd/kernels/bf16.h"
#include "autograd/kernels/kernels.h"
#include "autograd/kernels/reduce.h"
#include "autograd/kernels/split_master.h"
#include "autograd/kernels/sgemm.h"

namespace kernels {

namespace {

// a·b + c with one rounding where the CPU has an FMA instruction (what gcc's
// contraction makes of a·b + c there), with two where it has none (where
// std::fma would be a libm call per element).
inline float mul_add(float a, float b, float c) {
#ifdef __FMA__
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

}  // namespace

int64_t sum_squares_chunk(int64_t n) {
  return std::max<int64_t>(16384, (n + kSumSquaresMaxChunks - 1) / kSumSquaresMaxChunks);
}

void sum_squares_partials(double* partial, const float* x, int64_t n, int64_t chunk_begin, int64_t chunk_end) {
  // Inside a chunk, 16 lanes (Note [Lane reductions] in reduce.h): one
  // running double sum took 60 ms on GPT-2 small's 124 M gradients.
  const int64_t chunk = sum_squares_chunk(n);
#pragma omp parallel for schedule(static) if (chunk_end - chunk_begin > 1)
  for (int64_t k = chunk_begin; k < chunk_end; ++k) {
    const int64_t i0 = k * chunk, i1 = std::min(n, i0 + chunk);
    partial[k - chunk_begin] = lane_sum<16, double>(i1 - i0, [x, i0](int64_t i) {
      return static_cast<double>(x[i0 + i]) * x[i0 + i];
    });
  }
}

double sum_squares(const float* x, int64_t n) {
  // Partial sums over chunks whose size depends only on n, added in chunk
  // order: the same bits for any thread count, with no heap allocation.
  const int64_t n_chunks = (n + sum_squares_chunk(n) - 1) / sum_squares_chunk(n);
  double partial[kSumSquaresMaxChunks];
  sum_squares_partials(partial, x, n, 0, n_chunks);
  double total = 0.0;
  for (int64_t k = 0; k < n_chunks; ++k) total += partial[k];
  return total;
}

void scale_inplace(float* x, float s, int64_t n) {
#pragma omp parallel for schedule(static) if (n > 32768)
  for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

namespace {

// Where an update reads and writes its weights: a float32 buffer, or split
// masters' two planes (Note [Split master weights] in split_master.h). A
// template argument rather than a test per element, so both loops vectorise.
struct FloatMasters {
  float* p;
  float load(int64_t i) const { return p[i]; }
  void store(int64_t i, float x) const { p[i] = x; }
};
struct SplitMasters {
  uint16_t* hi;
  uint16_t* lo;
  float load(int64_t i) const { return join_master(hi[i], lo[i]); }
  void store(int64_t i, float x) const {
    const uint32_t u = master_bits(x);
    hi[i] = master_hi(u);
    lo[i] = master_lo(u);
  }
};

template <class Masters>
void adamw_loop(Masters param, float* m, float* v, float* grad, int64_t n, float lr, float beta1,
                float beta2, float eps, float weight_decay, int64_t step, float grad_scale) {
  // Same operation order as torch.optim.AdamW (single-tensor path) so the
  // float results match PyTorch's. The loop vectorises only because the
  // library is built without errno (Note [No errno in kernels], in
  // CMakeLists.txt): it is bounded by memory traffic, not by sqrt and division.
  const double bc1 = 1.0 - std::pow(static_cast<double>(beta1), static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(static_cast<double>(beta2), static_cast<double>(step));
  const float step_size = static_cast<float>(lr / bc1);
  const float bc2_sqrt = static_cast<float>(std::sqrt(bc2));
  const float decay = static_cast<float>(1.0 - static_cast<double>(lr) * weight_decay);
  const float one_minus_b1 = 1.0f - beta1, one_minus_b2 = 1.0f - beta2;
  // firstprivate: each thread's own copy of the pointers, which the
  // vectoriser then sees do not change in the loop (shared, the split
  // loop ran one element at a time, 4x slower).
#pragma omp parallel for simd schedule(static) firstprivate(param) if (n > 32768)
  for (int64_t i = 0; i < n; ++i) {
    const float g = grad[i] * grad_scale;
    grad[i] = 0.0f;
    float p = param.load(i) * decay;
    const float mi = mul_add(m[i], beta1, one_minus_b1 * g);
    const float vi = mul_add(v[i], beta2, one_minus_b2 * (g * g));
    m[i] = mi;
    v[i] = vi;
    const float denom = std::sqrt(vi) / bc2_sqrt + eps;
    // The fmas are written out: they are what gcc's contraction made of the
    // scalar loop, and left to contraction the vectorised loop fused
    // param·decay into the last line instead (other bits).
    p = mul_add(-step_size, mi / denom, p);
    param.store(i, p);
  }
}

}  // namespace

void adamw_update(float* param, float* m, float* v, float* grad, int64_t n, float lr,
                  float beta1, float beta2, float eps, float weight_decay, int64_t step,
                  float grad_scale) {
  adamw_loop(FloatMasters{param}, m, v, grad, n, lr, beta1, beta2, eps, weight_decay, step, grad_scale);
}

void adamw_update_split(uint16_t* hi, uint16_t* lo, float* m, float* v, float* grad, int64_t n, float lr,
                        float beta1, float beta2, float eps, float weight_decay, int64_t step,
                        float grad_scale) {
  adamw_loop(SplitMasters{hi, lo}, m, v, grad, n, lr, beta1, beta2, eps, weight_decay, step, grad_scale);
}

int64_t newton_schulz_scratch_floats(int64_t R, int64_t K) {
  const int64_t fp32 = R * K + 2 * R * R, bf16_copies = (R * K + 1) / 2 + 2 * ((R * R + 1) / 2);
  return fp32 + bf16_copies;
}

int64_t muon_scratch_floats(int64_t rows, int64_t cols) {
  return rows * cols + newton_schulz_scratch_floats(std::min(rows, cols), std::max(rows, cols));
}

void muon_momentum(float* x, float* m, float* grad, int64_t rows, int64_t cols, float momentum,
                   float grad_scale) {
  const int64_t n = rows * cols;
  const bool tall = rows > cols;  // x is [cols, rows] then
#pragma omp parallel for schedule(static) if (n > 32768)
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * cols + c;
      const float g = grad[i] * grad_scale;
      grad[i] = 0.0f;
      const float mi = mul_add(m[i], momentum, g);
      m[i] = mi;
      x[tall ? c * rows + r : i] = mul_add(momentum, mi, g);
    }
  // sum_squares adds in an order fixed by n: the same bits for any thread count.
  const float inv = static_cast<float>(1.0 / (std::sqrt(sum_squares(x, n)) + kMuonEps));
  scale_inplace(x, inv, n);
}

namespace {

// Both precisions' iteration. x[R,K] and y[R,K] take turns holding the
// iterate; A[R,R] = x·xᵀ, and AA[R,R] = A·A, then B = b·A + c·A·A in its
// place. In bf16 the products go through the linear kernels, on bf16
// copies xb, Ab and Bb kept after the float32 buffers: A = xb·xbᵀ and
// A·A = Ab·Abᵀ (A is symmetric), then next = a·x + Bb·xb, the input-
// gradient form, which adds into what next holds.
void newton_schulz_loop(float* x, float* scratch, int64_t R, int64_t K, int steps, bool bf16) {
  float* y = scratch;
  float* A = y + R * K;
  float* AA = A + R * R;
  uint16_t* xb = reinterpret_cast<uint16_t*>(AA + R * R);
  uint16_t* Ab = xb + 2 * ((R * K + 1) / 2);
  uint16_t* Bb = Ab + 2 * ((R * R + 1) / 2);
  float* cur = x;
  float* next = y;
  const int64_t RR = R * R, n = R * K;
  for (int s = 0; s < steps; ++s) {
    if (bf16) {
      round_to_bf16(xb, cur, n);
      linear_forward_bf16(A, xb, xb, nullptr, R, K, R);
      round_to_bf16(Ab, A, RR);
      linear_forward_bf16(AA, Ab, Ab, nullptr, R, R, R);
    } else {
      sgemm_split(CblasNoTrans, CblasTrans, R, R, K, cur, K, cur, K, 0.0f, A, R);
      sgemm_split(CblasNoTrans, CblasNoTrans, R, R, R, A, R, A, R, 0.0f, AA, R);
    }
#pragma omp parallel for simd schedule(static) if (RR > 32768)
    for (int64_t i = 0; i < RR; ++i) AA[i] = mul_add(kMuonC, AA[i], kMuonB * A[i]);
    if (bf16) {
      round_to_bf16(Bb, AA, RR);
#pragma omp parallel for simd schedule(static) if (n > 32768)
      for (int64_t i = 0; i < n; ++i) next[i] = kMuonA * cur[i];
      linear_backward_bf16(next, nullptr, Bb, xb, xb, R, K, R);  // next += B·x
    } else {
      sgemm_split(CblasNoTrans, CblasNoTrans, R, K, R, AA, R, cur, K, 0.0f, next, K);  // B·x
#pragma omp parallel for simd schedule(static) if (n > 32768)
      for (int64_t i = 0; i < n; ++i) next[i] = mul_add(kMuonA, cur[i], next[i]);
    }
    std::swap(cur, next);
  }
  if (cur != x) std::memcpy(x, cur, static_cast<size_t>(n) * sizeof(float));
}

}  // namespace

void newton_schulz(float* x, float* scratch, int64_t R, int64_t K, int steps) {
  newton_schulz_loop(x, scratch, R, K, steps, false);
}

void newton_schulz_bf16(float* x, float* scratch, int64_t R, int64_t K, int steps) {
  newton_schulz_loop(x, scratch, R, K, steps, true);
}

namespace {

template <class Masters>
void muon_apply_loop(Masters param, const float* x, int64_t rows, int64_t cols, float lr, float weight_decay) {
  const float decay = static_cast<float>(1.0 - static_cast<double>(lr) * weight_decay);
  const double shape_scale = std::sqrt(std::max(1.0, static_cast<double>(rows) / static_cast<double>(cols)));
  const float step_size = static_cast<float>(static_cast<double>(lr) * shape_scale);
  const bool tall = rows > cols;  // x is [cols, rows]
#pragma omp parallel for schedule(static) firstprivate(param) if (rows * cols > 32768)
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * cols + c;
      param.store(i, mul_add(-step_size, x[tall ? c * rows + r : i], param.load(i) * decay));
    }
}

}  // namespace

void muon_apply(float* param, const float* x, int64_t rows, int64_t cols, float lr, float weight_decay) {
  muon_apply_loop(FloatMasters{param}, x, rows, cols, lr, weight_decay);
}

void muon_update(float* param, float* m, float* grad, float* scratch, int64_t rows, int64_t cols,
                 float lr, float momentum, float weight_decay, float grad_scale) {
  float* x = scratch;  // [min, max] of rows and cols
  muon_momentum(x, m, grad, rows, cols, momentum, grad_scale);
  newton_schulz_loop(x, scratch + rows * cols, std::min(rows, cols), std::max(rows, cols), kMuonSteps, false);
  muon_apply(param, x, rows, cols, lr, weight_decay);
}

void muon_update_split(uint16_t* hi, uint16_t* lo, float* m, float* grad, float* scratch, int64_t rows,
                       int64_t cols, float lr, float momentum, float weight_decay, float grad_scale) {
  float* x = scratch;
  muon_momentum(x, m, grad, rows, cols, momentum, grad_scale);
  newton_schulz_loop(x, scratch + rows * cols, std::min(rows, cols), std::max(rows, cols), kMuonSteps, true);
  muon_apply_loop(SplitMasters{hi, lo}, x, rows, cols, lr, weight_decay);
}

}  // namespace kernels
