// OpenBLAS kernel selection and threading (see blas_setup.h).
#include "autograd/kernels/blas_setup.h"

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

bool blas_split_in_kernels() {
  static const bool split = openblas_get_parallel() == kPthreads && !std::getenv("OPENBLAS_NUM_THREADS");
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
  if (openblas_get_parallel() == kPthreads && blas_split_in_kernels()) openblas_set_num_threads(1);
}

}  // namespace kernels
