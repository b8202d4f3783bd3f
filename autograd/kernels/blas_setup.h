// Choosing OpenBLAS's kernels for this CPU, and how its threads and ours
// share the cores, before any matmul runs.
//
// Note [OpenBLAS core detection]
// Debian 12's OpenBLAS (0.3.21) does not recognise some newer CPUs (e.g.
// Intel Sapphire Rapids under a hypervisor) and falls back to its generic
// "Prescott" SSE3 kernels, about 4× slower than its AVX-512 ones on the same
// machine. OpenBLAS reads OPENBLAS_CORETYPE only when the library loads, so
// when the variable is unset and that fallback was taken on a CPU with
// AVX-512 (or AVX2 + FMA), we set it and re-execute the program once. A
// value the user set is always respected.
//
// Note [OpenBLAS builds]
// Debian ships OpenBLAS as three builds with one soname; which one loads
// depends on the RUNPATH (CMakeLists.txt picks the OpenMP build), the
// alternatives system and LD_LIBRARY_PATH. openblas_get_parallel() says
// which one it is, and each is handled differently (measurements and
// reasons in BENCHMARKS-journal.md, "OpenBLAS builds"):
//  - openmp: BLAS runs on our own OpenMP pool; with the SkylakeX and
//    Cooperlake kernels nothing more to do; with any other core, held at one
//    thread per call and split as the pthread build is, since its own cuts
//    made results depend on the thread count (Note [OpenBLAS threading by
//    core] in blas_setup.cpp).
//  - pthread: its own thread pool would compete with our spinning OpenMP
//    threads (2-3x slower steps, issue 17). We hold it at one thread per call and the
//    matmul kernels split each sgemm over our OpenMP threads instead (see
//    Note [Thread-count-independent sgemm] in matmul.cpp). If the user set
//    OPENBLAS_NUM_THREADS, OpenBLAS threads itself as asked, and OpenMP is
//    made to wait passively (OMP_WAIT_POLICY=PASSIVE, read only when the
//    OpenMP runtime loads, hence set with the re-execution above) unless
//    the user set OMP_WAIT_POLICY too.
//  - serial: one thread per call, and, measured, not safe to call from
//    several threads at once (two concurrent sgemm calls sometimes return
//    wrong results; apparently built without USE_LOCKING), so every
//    OpenBLAS call stays on one thread and tapegpt says so where it reports
//    the build; the cost is in BENCHMARKS-journal.md, "OpenBLAS builds".
#pragma once

#include <string>

namespace kernels {

// Call first thing in main() with main's argv. Returns normally when no
// change is needed; otherwise does not return (the process re-executes).
void select_blas_kernels(char** argv);

// The OpenBLAS core type in use, e.g. "SkylakeX", for reports.
const char* blas_core_name();

// The OpenBLAS build in use: "openmp", "pthread" or "serial".
const char* blas_build_name();

// True when OpenBLAS runs each call on one thread and the matmul kernels
// split sgemm over OpenMP threads themselves (Note [OpenBLAS builds]).
// Fixed for the life of the process.
bool blas_split_in_kernels();

// For reports: core, build and how it is threaded, e.g. "core SkylakeX,
// pthread build, sgemm split over tapegpt's threads".
std::string blas_description();

// False for the serial build, whose calls must not overlap: kernels that
// call OpenBLAS from inside their own parallel loops run them on one thread.
bool blas_calls_may_overlap();

// Sets OpenBLAS's thread count to follow --threads, unless the kernels do
// the splitting or the user pinned it with OPENBLAS_NUM_THREADS.
void set_blas_threads(int threads);

}  // namespace kernels
