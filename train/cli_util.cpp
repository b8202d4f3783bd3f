// Thread-count control shared by the commands (see cli_util.h).
#include "train/cli_util.h"

#include <omp.h>

#include "autograd/kernels/blas_setup.h"

namespace cli {

void set_threads(int threads) {
  if (threads <= 0) return;
  omp_set_num_threads(threads);
  kernels::set_blas_threads(threads);
}

}  // namespace cli
