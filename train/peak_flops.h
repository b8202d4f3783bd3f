// The machine's measured matmul rate: the ceiling used to report CPU
// efficiency (achieved model FLOP/s as a share of what sgemm reaches here).
#pragma once

#include <cstdint>
#include <string>
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

// `tapegpt bench --bf16-rate` (issue 22): one linear layer's three matmuls
// (forward inp·Wᵀ, input gradient dout·W, weight gradient doutᵀ·inp), each
// 2·rows·IC·OC FLOPs, through the bf16 kernels (oneDNN in pieces, bf16.h),
// through oneDNN's own whole calls (the *_whole_call reference) and through
// the float32 ones (OpenBLAS sgemm), median of `reps` calls after one
// untimed call each. A result only where oneDNN runs bf16 natively
// (kernels::bf16_native()): elsewhere the caller reports that instead.
struct Bf16Rate {
  std::string layer;  // e.g. "GPT-2 qkv"
  int64_t rows = 0, IC = 0, OC = 0;
  double bf16_flops[3] = {};  // forward, input gradient, weight gradient: FLOP/s
  double bf16_whole_call_flops[3] = {};
  double fp32_flops[3] = {};
};
// The layers of issue 22's measurement: GPT-2 small's qkv, MLP up and down
// (512 rows), its lm_head (256 rows) and the M shape's qkv (1024 rows).
std::vector<Bf16Rate> measure_bf16_rates(int reps = 5);

// `--precision auto`'s check (train/precision.h): how much faster the bf16
// kernels run one model's matmuls than float32 does here, as float32's
// seconds over bf16's, for the MLP's two layers (C→4C, 4C→C: most of a
// step's matmul FLOPs) at `rows` rows (capped at 128, so that the check
// stays short), forward and both gradients, on one thread (the ratio is the
// instruction set's; one thread keeps a busy machine from distorting it).
// Each side is timed `reps` times, alternating, and keeps its fastest.
// Needs kernels::bf16_matmul_available(). About 0.3 s at C 768 on an AMD
// Zen 4 (more on a busy one), hundredths of a second at C 256.
double measure_bf16_speedup(int64_t rows, int64_t C, int reps = 4);

}  // namespace train
