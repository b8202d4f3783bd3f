// OpenBLAS kernel selection (see blas_setup.h).
#include "autograd/kernels/blas_setup.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

extern "C" char* openblas_get_corename(void);

namespace kernels {

const char* blas_core_name() { return openblas_get_corename(); }

void select_blas_kernels(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") || std::getenv("TAPEGPT_BLAS_REEXEC")) return;
  if (std::strcmp(openblas_get_corename(), "Prescott") != 0) return;  // detection worked
  const char* core = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    core = "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    core = "Haswell";
  if (!core) return;  // a genuinely old CPU: Prescott is right
  setenv("OPENBLAS_CORETYPE", core, 1);
  setenv("TAPEGPT_BLAS_REEXEC", "1", 1);  // never loop
  execv("/proc/self/exe", argv);
  // execv failed (no /proc?): carry on with the slower kernels.
}

}  // namespace kernels
