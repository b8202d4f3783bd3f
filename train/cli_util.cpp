// Thread-count control shared by the commands (see cli_util.h).
#include "train/cli_util.h"

#include <cblas.h>
#include <omp.h>

namespace cli {

void set_threads(int threads) {
  if (threads <= 0) return;
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
}

}  // namespace cli
