// The training loop: batches → taped forward → backward → clip + AdamW →
// log, with periodic validation and atomic checkpoints. Knows the model and
// the checkpoint *contents*, not HDF5.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>

#include "data/tokenizer_spec.h"
#include "nn/gpt.h"
#include "train/options.h"

namespace train {

// What changes as a run goes on, saved in every checkpoint.
struct RunState {
  int64_t step = 0;
  int64_t tokens_seen = 0;
  std::array<uint64_t, 4> rng_state{};  // sampler draws and dropout seeds
  int64_t sampler_position = 0;
  double best_val_loss = std::numeric_limits<double>::infinity();
  std::string run_id;                   // Note [Run identity] in run_dir.h
};

// Runs `options` on `model` from `state` until max_steps, a signal, or a
// non-finite loss. Returns the process exit code (0 on success and on a
// graceful stop; 1 when training diverged). Throws tg::DataError on I/O
// failures (the previous checkpoint is then still intact).
// `resumed_data_hash` (empty for a new run) is the hash saved in the
// checkpoint: training on other data is refused unless allow_data_change.
int run_training(const TrainOptions& options, nn::GPT& model,
                 const data::TokenizerSpec& tokenizer, RunState state, bool resumed,
                 const std::string& resumed_data_hash, bool allow_data_change);

// Bytes the run will hold, for the estimate printed before the first step.
struct MemoryEstimate {
  int64_t parameters = 0, gradients = 0, moments = 0, activations = 0;
  int64_t total() const { return parameters + gradients + moments + activations; }
};
MemoryEstimate estimate_memory(const nn::GPT& model, int64_t batch_size);

}  // namespace train
