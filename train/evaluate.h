// Loss over a token sequence with the model and no tape: the windowing used
// by both `tapegpt eval` and the trainer's validation, so the two agree.
//
// Default (stride = block_size): non-overlapping windows from the start, so
// each of the N-1 targets is scored exactly once. With stride S < block_size
// each window advances by S and scores only its last S targets, so every
// target is still scored once, with up to block_size tokens of context.
//
// Note [Spread evaluation]: a partial evaluation (max_windows below the
// split's window count) scores max_windows of those same windows spread
// evenly over the whole split, window floor((k + 1/2) W / M) for k < M: the
// same windows every time, and an estimate whose expectation is the whole
// split's loss. Scoring the first M windows instead measured only the
// split's start: on Tiny Shakespeare 0.07 nats better than the whole.
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
  int64_t windows = 0;    // windows scored
  int64_t split_windows = 0;  // windows of the whole split: windows < split_windows for an estimate
  bool whole() const { return windows == split_windows; }
  double mean_loss() const { return tokens ? loss_sum / static_cast<double>(tokens) : 0.0; }
};

struct EvalOptions {
  int64_t stride = 0;          // 0 = block_size
  int64_t batch_size = 8;      // windows per forward pass
  int64_t max_windows = 0;     // 0 = all; else at most that many, spread evenly (Note [Spread evaluation])
  const std::vector<int64_t>* token_bytes = nullptr;  // id → byte length, for bits per byte
  std::function<void(int64_t done, int64_t total)> progress;
};

// The windows a whole-split evaluation of n_tokens scores (stride 0 =
// block_size).
int64_t count_eval_windows(int64_t n_tokens, int64_t block_size, int64_t stride = 0);

// Whether a run's last evaluation scores the whole split rather than its
// partial windows: when that costs at most kFinalWholeRatio partial
// evaluations, so the loss a run ends on is the one `tapegpt eval` prints.
constexpr int64_t kFinalWholeRatio = 10;
bool final_eval_is_whole(int64_t partial_windows, int64_t split_windows);

EvalResult evaluate_tokens(const nn::GPT& model, const TokenSource& source,
                           const EvalOptions& options, autograd::Arena& arena);

}  // namespace train
