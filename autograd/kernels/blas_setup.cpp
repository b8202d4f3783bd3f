// OpenBLAS kernel selection and threading (see blas_setup.h).
#include "autograd/kernels/blas_setup.h"

#include <omp.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

extern "C" char* openblas_get_corename(void);
extern "C" int openblas_get_parallel(void);
extern "C" void openblas_set_num_threads(int num_threads);

namespace kernels {

namespace {

enum BlasParallel { kSerial = 0, kPthreads = 1, kOpenMP = 2 };


// The core type to force when OpenBLAS fell back to Prescott on a CPU that
// has better kernels, or null (Note [OpenBLAS core detection]).
const char* better_core() {
  if (std::getenv("OPENBLAS_CORETYPE")) return nullptr;  // the user's choice
  if (std::strcmp(openblas_get_corename(), "Prescott") != 0) return nullptr;  // detection worked
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return nullptr;  // a genuinely old CPU: Prescott is right
}

}  // namespace

const char* blas_core_name() { return openblas_get_corename(); }

const char* blas_build_name() {
  switch (openblas_get_parallel()) {
    case kSerial: return "serial";
    case kPthreads: return "pthread";
    case kOpenMP: return "openmp";
    default: return "unknown";
  }
}

// Note [OpenBLAS threading by core]: the OpenMP build threads a call itself,
// cutting the output between its threads; with the Haswell kernels (also
// what OpenBLAS runs on AMD Zen, and what OPENBLAS_CORETYPE=Haswell picks) a
// cut through a register tile changes which kernel edge an element takes and
// so the order of its sums: --threads 1 and 2 gave other bits at every K
// (tests/robustness/test_kernel_threads.cpp). The SkylakeX and Cooperlake
// kernels gave the same bits for any thread count (measured on those cores),
// so they keep OpenBLAS's own threading; every other core is held at one
// thread per call and split by the kernels on shape-fixed pieces, as the
// pthread build is.
static bool openmp_threading_is_thread_independent() {
  const char* core = openblas_get_corename();
  return std::strcmp(core, "SkylakeX") == 0 || std::strcmp(core, "Cooperlake") == 0;
}

bool blas_split_in_kernels() {
  static const bool split =
      !std::getenv("OPENBLAS_NUM_THREADS") &&
      (openblas_get_parallel() == kPthreads ||
       (openblas_get_parallel() == kOpenMP && !openmp_threading_is_thread_independent()));
  return split;
}

bool blas_calls_may_overlap() { return openblas_get_parallel() != kSerial; }

std::string blas_description() {
  std::string d = std::string("core ") + blas_core_name() + ", " + blas_build_name() + " build";
  if (blas_split_in_kernels()) return d + ", sgemm split over tapegpt's threads";
  if (openblas_get_parallel() == kSerial)
    return d + ": every matmul on one thread (this build cannot run calls in parallel), so training is "
               "slower; install libopenblas0-openmp for the fast path";
  if (openblas_get_parallel() != kPthreads) return d;
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  return d + ", OpenBLAS's own threads (OPENBLAS_NUM_THREADS=" + std::getenv("OPENBLAS_NUM_THREADS") +
         ", OMP_WAIT_POLICY=" + (policy ? policy : "unset") + ")";
}

void set_blas_threads(int threads) {
  if (threads <= 0 || blas_split_in_kernels()) return;
  if (openblas_get_parallel() == kPthreads) return;  // OPENBLAS_NUM_THREADS: the user's choice
  openblas_set_num_threads(threads);
}

void select_blas_kernels(char** argv) {
  if (!std::getenv("TAPEGPT_BLAS_REEXEC")) {
    bool changed = false;
    if (const char* core = better_core()) {
      setenv("OPENBLAS_CORETYPE", core, 1);
      changed = true;
    }
    if (openblas_get_parallel() == kPthreads && !blas_split_in_kernels() && !std::getenv("OMP_WAIT_POLICY")) {
      setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
      changed = true;
    }
    if (changed) {
      setenv("TAPEGPT_BLAS_REEXEC", "1", 1);  // never loop
      execv("/proc/self/exe", argv);
      // execv failed (no /proc?): carry on as we are, only slower.
    }
  }
  if (blas_split_in_kernels()) {
    // The OpenMP build's setter also sets OpenMP's own thread count: keep
    // ours. Held at 1, it then runs every call on one thread even as
    // --threads changes OpenMP's count (its num_cpu_avail checks 1 first).
    const int ours = omp_get_max_threads();
    openblas_set_num_threads(1);
    omp_set_num_threads(ours);
  }
}

}  // namespace kernels
