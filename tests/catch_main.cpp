// The one Catch2 main shared by every test executable. It selects OpenBLAS's
// kernels as the tapegpt binary does, so tests exercise the kernels users run.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "autograd/kernels/blas_setup.h"

int main(int argc, char** argv) {
  kernels::select_blas_kernels(argv);
  return Catch::Session().run(argc, argv);
}
