// Loss over a token sequence with the model and no tape: the windowing used
// by both `tapegpt eval` and the trainer's validation, so the two agree.
//
// Default (stride = block_size): non-overlapping windows from the start, so
// each of the N-1 targets is scored exactly once. With stride S < block_size
// each window advances by S and scores only its last S targets, so every
// target is still scored once, with up to block_size tokens of context.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "autograd/arena.h"
#include "nn/gpt.h"

namespace train {

struct TokenSource {
  int64_t size = 0;                                          // N tokens
  std::function<void(int32_t* dst, int64_t start, int64_t n)> copy;
};

struct EvalResult {
  double loss_sum = 0.0;  // nats, summed over scored targets
  int64_t tokens = 0;     // targets scored
  int64_t bytes = 0;      // text bytes those targets stand for (if known)
  double mean_loss() const { return tokens ? loss_sum / static_cast<double>(tokens) : 0.0; }
};

struct EvalOptions {
  int64_t stride = 0;          // 0 = block_size
  int64_t batch_size = 8;      // windows per forward pass
  int64_t max_windows = 0;     // 0 = all
  const std::vector<int64_t>* token_bytes = nullptr;  // id → byte length, for bits per byte
  std::function<void(int64_t done, int64_t total)> progress;
};

EvalResult evaluate_tokens(const nn::GPT& model, const TokenSource& source,
                           const EvalOptions& options, autograd::Arena& arena);

}  // namespace train
