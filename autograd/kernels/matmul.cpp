// Linear layer kernels: every matmul is cblas_sgemm (cblas_sgemv for one row).
#include <cblas.h>

#include "autograd/kernels/kernels.h"
#include "autograd/kernels/reduce.h"

namespace kernels {

namespace {

// Note [Thread-count-independent sgemm]
// OpenBLAS 0.3.21 splits the summed dimension K differently with one thread
// than with several when K is above ~448 and not a multiple of 32 (seen with
// its SkylakeX kernels: K = 487, 1031, 50257), so the same run gave other
// bits with --threads 1 and 2. Summing K as a multiple of 256 first and the
// remainder second gives every thread count the same order of additions
// (checked by tests/robustness/test_kernel_threads.cpp), at no measurable cost.
void sgemm_fixed_k(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N, int64_t K,
                   const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                   int64_t ldc) {
  const int64_t head = K / 256 * 256, tail = K - head;
  const float* a_tail = ta == CblasNoTrans ? A + head : A + head * lda;
  const float* b_tail = tb == CblasNoTrans ? B + head * ldb : B + head;
  if (head)
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, head, 1.0f, A, lda, B, ldb, beta, C, ldc);
  if (tail)
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, tail, 1.0f, a_tail, lda, b_tail, ldb,
                head ? 1.0f : beta, C, ldc);
}

}  // namespace

void linear_forward(float* out, const float* inp, const float* weight, const float* bias,
                    int64_t N, int64_t IC, int64_t OC) {
  // out[N,OC] = inp[N,IC] · weight[OC,IC]ᵀ (+ bias broadcast over rows).
  float beta = 0.0f;
  if (bias) {
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < N; ++n) {
      float* row = out + n * OC;
      for (int64_t o = 0; o < OC; ++o) row[o] = bias[o];
    }
    beta = 1.0f;
  }
  if (N == 1) {
    // One row (KV-cache decoding): a matrix-vector product, which OpenBLAS
    // runs as a streaming sgemv instead of a packed sgemm.
    cblas_sgemv(CblasRowMajor, CblasNoTrans, OC, IC, 1.0f, weight, IC, inp, 1, beta, out, 1);
    return;
  }
  sgemm_fixed_k(CblasNoTrans, CblasTrans, N, OC, IC, inp, IC, weight, IC, beta, out, OC);
}

void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                     const float* inp, const float* weight, int64_t N, int64_t IC, int64_t OC) {
  // dinp[N,IC] += dout[N,OC] · weight[OC,IC]
  if (dinp) sgemm_fixed_k(CblasNoTrans, CblasNoTrans, N, IC, OC, dout, OC, weight, IC, 1.0f, dinp, IC);
  // dweight[OC,IC] += dout[N,OC]ᵀ · inp[N,IC]
  if (dweight) sgemm_fixed_k(CblasTrans, CblasNoTrans, OC, IC, N, dout, OC, inp, IC, 1.0f, dweight, IC);
  // dbias[OC] += Σ_n dout[n, :]
  if (dbias) sum_rows_accumulate(dbias, dout, N, OC);
}

}  // namespace kernels
