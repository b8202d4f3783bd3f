// Linear layer kernels: every matmul is cblas_sgemm (cblas_sgemv for one row).
#include <cblas.h>
#include <omp.h>

#include <algorithm>

#include "autograd/kernels/blas_setup.h"
#include "autograd/kernels/kernels.h"
#include "autograd/kernels/reduce.h"
#include "autograd/kernels/sgemm.h"

namespace kernels {

namespace {

// Note [Thread-count-independent sgemm]
// OpenBLAS 0.3.21 splits the summed dimension K differently with one thread
// than with several when K is above ~448 and not a multiple of 32 (seen with
// its SkylakeX kernels: K = 487, 1031, 50257), so the same run gave other
// bits with --threads 1 and 2. Summing K as a multiple of 256 first and the
// remainder second gives every thread count the same order of additions
// (checked by tests/robustness/test_kernel_threads.cpp), at no measurable cost.
//
// With OpenBLAS's pthread build (Note [OpenBLAS builds]) each call runs on
// one thread, so sgemm_split cuts the output into pieces and runs one
// call per piece on our OpenMP threads. The pieces depend only on the matrix
// shape, never on the thread count, so every thread count makes the same
// calls on the same pieces and gets the same bits, whatever OpenBLAS does
// inside a call (its small-matrix kernels, say, for some pieces and not
// others).
// Where the kernels split sgemm themselves, every OpenBLAS call runs on one
// thread. The pthread build is held there once; the OpenMP build follows
// OpenMP's thread count at each call made outside an active parallel region
// (inside one it runs on one thread), so such a call is made with the count
// at 1 for its duration.
class OneBlasThread {
 public:
  OneBlasThread() : restore_(blas_split_in_kernels() && !omp_in_parallel() ? omp_get_max_threads() : 0) {
    if (restore_) omp_set_num_threads(1);
  }
  ~OneBlasThread() {
    if (restore_) omp_set_num_threads(restore_);
  }
  OneBlasThread(const OneBlasThread&) = delete;
  OneBlasThread& operator=(const OneBlasThread&) = delete;

 private:
  int restore_;
};

void sgemm_fixed_k(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N, int64_t K,
                   const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                   int64_t ldc) {
  const OneBlasThread one_thread;
  const int64_t head = K / 256 * 256, tail = K - head;
  const float* a_tail = ta == CblasNoTrans ? A + head : A + head * lda;
  const float* b_tail = tb == CblasNoTrans ? B + head * ldb : B + head;
  if (head)
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, head, 1.0f, A, lda, B, ldb, beta, C, ldc);
  if (tail)
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, tail, 1.0f, a_tail, lda, b_tail, ldb,
                head ? 1.0f : beta, C, ldc);
}

// Pieces a dimension of `dim` is cut into: at most 16, each at least 64 wide
// and about 4 MFLOP of work. A function of the shape only (see above).
int64_t split_pieces(int64_t dim, int64_t work_flops) {
  return std::max<int64_t>(1, std::min<int64_t>({16, dim / 64, work_flops / 4000000}));
}

// Piece width: dim / pieces rounded up to a multiple of 16 (OpenBLAS's
// register tiles), so only the last piece has a ragged edge.
int64_t piece_width(int64_t dim, int64_t pieces) { return ((dim + pieces - 1) / pieces + 15) / 16 * 16; }

}  // namespace

// sgemm.h: sgemm_fixed_k cut into the pieces above.
void sgemm_split(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N, int64_t K,
                 const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                 int64_t ldc) {
  const bool by_rows = M >= N;
  const int64_t dim = by_rows ? M : N;
  const int64_t pieces = blas_split_in_kernels() ? split_pieces(dim, 2 * M * N * K) : 1;
  if (pieces == 1) {
    sgemm_fixed_k(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  const int64_t width = piece_width(dim, pieces), count = (dim + width - 1) / width;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t p = 0; p < count; ++p) {
    const int64_t start = p * width, w = std::min(width, dim - start);
    if (by_rows)  // rows start…start+w of C and of op(A)
      sgemm_fixed_k(ta, tb, w, N, K, ta == CblasNoTrans ? A + start * lda : A + start, lda, B, ldb,
                    beta, C + start * ldc, ldc);
    else  // columns start…start+w of C and of op(B)
      sgemm_fixed_k(ta, tb, M, w, K, A, lda, tb == CblasNoTrans ? B + start : B + start * ldb, ldb,
                    beta, C + start, ldc);
  }
}

namespace {

// out[OC] = W[OC,IC]·x + beta·out, cut into shape-fixed row pieces as sgemm_split.
void sgemv_split(const float* W, const float* x, float beta, float* out, int64_t OC, int64_t IC) {
  // Memory-bound: pieces of at least 64K weights rather than 4 MFLOP.
  const int64_t pieces = blas_split_in_kernels() ? std::max<int64_t>(1, std::min<int64_t>({16, OC / 64, OC * IC / 65536})) : 1;
  if (pieces == 1) {
    const OneBlasThread one_thread;
    cblas_sgemv(CblasRowMajor, CblasNoTrans, OC, IC, 1.0f, W, IC, x, 1, beta, out, 1);
    return;
  }
  const int64_t width = piece_width(OC, pieces), count = (OC + width - 1) / width;
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < count; ++p) {
    const int64_t start = p * width, w = std::min(width, OC - start);
    cblas_sgemv(CblasRowMajor, CblasNoTrans, w, IC, 1.0f, W + start * IC, IC, x, 1, beta, out + start, 1);
  }
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
    sgemv_split(weight, inp, beta, out, OC, IC);
    return;
  }
  sgemm_split(CblasNoTrans, CblasTrans, N, OC, IC, inp, IC, weight, IC, beta, out, OC);
}

void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                     const float* inp, const float* weight, int64_t N, int64_t IC, int64_t OC) {
  // dinp[N,IC] += dout[N,OC] · weight[OC,IC]
  if (dinp) sgemm_split(CblasNoTrans, CblasNoTrans, N, IC, OC, dout, OC, weight, IC, 1.0f, dinp, IC);
  // dweight[OC,IC] += dout[N,OC]ᵀ · inp[N,IC], in row chunks.
  // Note [Weight gradient in row chunks]: for a transposed A, OpenBLAS
  // 0.3.21 packs all M rows of it into its workspace at once, and the pages
  // it touches stay resident: for the lm_head (M = GPT-2's 50,257 vocabulary
  // rows, K = B·T) that was 50 MiB of the peak RSS. Chunks of at most
  // kWeightGradRows output rows touch 9; each element's sum over K is the
  // same call's, so the bits are those of one call (tests/robustness
  // test_kernel_threads checks it).
  constexpr int64_t kWeightGradRows = 8192;
  if (dweight)
    for (int64_t r0 = 0; r0 < OC; r0 += kWeightGradRows) {
      const int64_t rows = std::min(kWeightGradRows, OC - r0);
      sgemm_split(CblasTrans, CblasNoTrans, rows, IC, N, dout + r0, OC, inp, IC, 1.0f, dweight + r0 * IC, IC);
    }
  // dbias[OC] += Σ_n dout[n, :]
  if (dbias) sum_rows_accumulate(dbias, dout, N, OC);
}

}  // namespace kernels
