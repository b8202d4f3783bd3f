// Choosing OpenBLAS's kernels for this CPU before any matmul runs.
//
// Note [OpenBLAS core detection]
// Debian 12's OpenBLAS (0.3.21) does not recognise some newer CPUs (e.g.
// Intel Sapphire Rapids under a hypervisor) and falls back to its generic
// "Prescott" SSE3 kernels, about 4× slower than its AVX-512 ones on the same
// machine. OpenBLAS reads OPENBLAS_CORETYPE only when the library loads, so
// when the variable is unset and that fallback was taken on a CPU with
// AVX-512 (or AVX2 + FMA), we set it and re-execute the program once. A
// value the user set is always respected.
#pragma once

namespace kernels {

// Call first thing in main() with main's argv. Returns normally when no
// change is needed; otherwise does not return (the process re-executes).
void select_blas_kernels(char** argv);

// The OpenBLAS core type in use, e.g. "SkylakeX", for reports.
const char* blas_core_name();

}  // namespace kernels
