// The one sgemm every kernel's matrix product goes through (internal header;
// defined in matmul.cpp): the linear layers and Muon's Newton–Schulz iteration.
#pragma once

#include <cblas.h>

#include <cstdint>

namespace kernels {

// C[M,N] = op(A)·op(B) + beta·C, row-major, through cblas_sgemm: the summed
// dimension K in a fixed order and the output cut along M or N (the larger)
// into pieces fixed by the shape, run in parallel when OpenBLAS does not
// thread the call itself, so the bits do not depend on the thread count
// (Note [Thread-count-independent sgemm] in matmul.cpp).
void sgemm_split(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N, int64_t K,
                 const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                 int64_t ldc);

}  // namespace kernels
