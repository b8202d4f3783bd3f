// The checkpoint's contents as plain data, and the two calls that write and
// read one HDF5 file. This module is the only code that includes HDF5; the
// layout is described in checkpoints/README.md.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "data/tokenizer_spec.h"
#include "nn/config.h"
#include "nn/params.h"

namespace checkpoints {

constexpr int64_t kFormatVersion = 1;

// One named training flag (the trainer's own options), stored as an HDF5
// attribute of /train/flags so a run resumes with no flags on the command line.
struct Flag {
  std::string name;
  std::variant<int64_t, double, std::string> value;
};

struct TrainState {
  int64_t step = 0;                       // optimizer steps completed
  int64_t tokens_seen = 0;
  uint64_t seed = 0;
  std::array<uint64_t, 4> rng_state{};    // the run's tg::Rng (sampler, dropout)
  int64_t sampler_position = 0;           // sequential sampler: next micro-batch index
  double best_val_loss = 0;               // +inf when never evaluated
  std::string data_hash;                  // hash of train.bin and val.bin
  std::string run_dir;                    // where the run writes by default
  std::vector<Flag> flags;
};

struct OptimizerState {
  int64_t step = 0;                       // AdamW steps taken (bias correction)
  double lr = 0, beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.1;
  // The moments themselves live in ParameterStore::m and ::v.
};

struct Checkpoint {
  nn::GPTConfig config;
  TrainState train;
  OptimizerState optimizer;
  data::TokenizerSpec tokenizer;
};

// Writes `path` atomically: a temporary file beside it, flushed and fsynced,
// then renamed over `path`, so a crash at any moment leaves either the old
// file or the new one. Writes /optimizer moments only when with_optimizer.
// Throws tg::DataError with a one-line message on any failure, leaving an
// existing `path` untouched and no temporary file behind.
void save_checkpoint(const std::string& path, const Checkpoint& meta,
                     const nn::ParameterStore& store, bool with_optimizer = true);

struct Loaded {
  Checkpoint meta;
  nn::ParameterStore store;               // params (and m, v if loaded)
  bool has_optimizer = false;
};

// Reads and validates `path` as an untrusted file: format and version, every
// dataset's presence, dtype, rank and dimensions against the config, token
// ids in merges against the vocabulary. Loads moments when with_optimizer.
// Throws tg::DataError naming the file and what is wrong.
Loaded load_checkpoint(const std::string& path, bool with_optimizer = true);

}  // namespace checkpoints
