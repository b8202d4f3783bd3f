// The machine's measured matmul rate: the ceiling used to report CPU
// efficiency (achieved model FLOP/s as a share of what sgemm reaches here).
#pragma once

#include <vector>

namespace train {

// Times a few 1024³ cblas_sgemm calls with the current thread count and
// returns the best rate in FLOP/s (about 0.1 s of work: cheap enough for
// every `train` and `bench` start).
double measure_sgemm_peak_flops();

// OpenBLAS's own rate on one square size n: the median over `reps` timed
// cblas_sgemm calls (after one untimed call), in FLOP/s.
struct SgemmRate {
  int n = 0;
  double median_flops = 0;
};

// The reference rate of `tapegpt bench --sgemm-rate` (and scripts/bench.sh):
// square sizes 1024, 1536 and 2048, median of 7 calls each (a few seconds
// of work). A median, unlike the best call, is what a long run can expect.
std::vector<SgemmRate> measure_sgemm_rates(const std::vector<int>& sizes = {1024, 1536, 2048}, int reps = 7);

}  // namespace train
