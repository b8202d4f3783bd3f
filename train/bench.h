// Throughput and memory measurements behind `tapegpt bench` (and
// scripts/bench.sh): the real training step (same code as `train`) on
// synthetic tokens, a per-kernel replay of one step for the time profile,
// and KV-cache sampling speed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/config.h"
#include "nn/gpt.h"
#include "train/optimizer.h"
#include "train/precision.h"

namespace train {

struct BenchOptions {
  nn::GPTConfig model;
  int64_t batch_size = 8;
  int64_t steps = 10;        // timed steps (median reported)
  int64_t warmup = 3;        // untimed steps first
  int64_t prompt_tokens = 16;
  int64_t sample_tokens = 64;  // 0 skips the sampling measurement
  bool profile = true;
  bool naive_attention = false;  // also time the naive T×T attention kernels against the blockwise ones
  train::Precision precision = train::Precision::Fp32;  // of the step and the sampling (--precision)
  int64_t grad_accum = 1;    // micro-batches a step
  // The step's optimizer: AdamW, or Muon over the blocks' matrices at
  // muon_lr (its AdamW rows scaled as Note [Muon] says).
  OptimizerKind optimizer = OptimizerKind::AdamW;
  MuonConfig muon;
  double muon_lr = 0.02;
};

struct ProfileEntry {
  std::string category;  // matmul, attention, layernorm, gelu, softmax/cross-entropy, ...
  double seconds = 0;    // per training step
};

// One layer's attention forward + backward, each kernel pair called directly.
struct AttentionKernels {
  double blockwise_seconds = 0, naive_seconds = 0;  // medians
  int64_t blockwise_saved_bytes = 0;  // kept for backward: each row's log-sum-exp
  int64_t naive_saved_bytes = 0;      // kept for backward: every T×T probability
  int64_t naive_scratch_bytes = 0;    // the naive backward's T×T scratch
};

struct BenchResult {
  double step_seconds = 0;        // median
  double tokens_per_s = 0;
  double model_flops_per_s = 0;   // training_flops_per_token × tokens/s
  double sgemm_peak_flops = 0;    // measured in the same process
  double optimizer_seconds = 0;   // median of clip-norm + the optimizer (AdamW or Muon) + zeroing per step
  int64_t peak_rss_bytes = 0;
  int64_t parameter_bytes = 0, gradient_bytes = 0, moment_bytes = 0, activation_bytes = 0;
  std::vector<ProfileEntry> profile;
  double sample_tokens_per_s = 0;  // KV cache, batch 1
  double weight_bytes = 0;         // read once per sampled token
  double memory_bandwidth = 0;     // bytes/s, measured (large memcpy)
  AttentionKernels attention;      // with naive_attention only
};

BenchResult run_bench(const BenchOptions& options);

}  // namespace train
