// Linear layer kernels: every matmul is one cblas_sgemm call.
#include <cblas.h>

#include "autograd/kernels/kernels.h"
#include "autograd/kernels/reduce.h"

namespace kernels {

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
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, IC, 1.0f, inp, IC, weight, IC,
              beta, out, OC);
}

void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                     const float* inp, const float* weight, int64_t N, int64_t IC, int64_t OC) {
  // dinp[N,IC] += dout[N,OC] · weight[OC,IC]
  if (dinp)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, IC, OC, 1.0f, dout, OC, weight,
                IC, 1.0f, dinp, IC);
  // dweight[OC,IC] += dout[N,OC]ᵀ · inp[N,IC]
  if (dweight)
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, IC, N, 1.0f, dout, OC, inp, IC,
                1.0f, dweight, IC);
  // dbias[OC] += Σ_n dout[n, :]
  if (dbias) sum_rows_accumulate(dbias, dout, N, OC);
}

}  // namespace kernels
