// The machine's measured matmul peak: the ceiling used to report CPU
// efficiency (achieved model FLOP/s as a share of what sgemm reaches here).
#pragma once

namespace train {

// Times a few 1024³ cblas_sgemm calls with the current thread count and
// returns the best rate in FLOP/s (about 0.1 s of work).
double measure_sgemm_peak_flops();

}  // namespace train
