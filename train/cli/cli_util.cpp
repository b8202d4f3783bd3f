// Thread-count control and number formatting shared by the commands (see cli_util.h).
#include "train/cli/cli_util.h"

#include <omp.h>

#include <chrono>

#include "autograd/kernels/blas_setup.h"

namespace cli {

double command_seconds() {
  static const auto start = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void set_threads(int threads) {
  if (threads <= 0) return;
  omp_set_num_threads(threads);
  kernels::set_blas_threads(threads);
}


std::string grouped(int64_t n) {
  std::string s = std::to_string(n), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

}  // namespace cli
