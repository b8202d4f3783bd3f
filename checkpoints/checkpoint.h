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

// 2: every dataset carries a Fletcher32 checksum. Version 1 files (no
// checksums) still load.
constexpr int64_t kFormatVersion = 2;

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
  double train_seconds = 0;               // wall seconds spent in training steps (no evaluation
                                          // or saving); 0 in files from before it was saved
  std::string data_hash;                  // hash of train.bin and val.bin
  std::string run_dir;                    // where the run was started (informational)
  std::string run_id;                     // random id given at the start of a run; "" in
                                          // files from before format_version 2
  std::vector<Flag> flags;
};

struct OptimizerState {
  // Whose state m and v hold: "adamw", or "muon" (Muon's momentum in m for
  // the blocks' matrices, AdamW's moments for the rest: Note [Muon] in
  // train/optimizer.h). Files from before it have no name: "adamw".
  std::string name = "adamw";
  int64_t step = 0;                       // optimizer steps taken (AdamW's bias correction)
  double lr = 0, beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.1;
  // The moments themselves live in ParameterStore::m and ::v.
};

struct Checkpoint {
  nn::GPTConfig config;
  TrainState train;
  OptimizerState optimizer;
  data::TokenizerSpec tokenizer;
};

// Where save_checkpoint reads the optimizer's two moments when not from the
// store's m and v: a sharded run (train/distributed/optimizer_shard.h)
// gathers each whole moment only as it is written, m and then v into the
// same buffer, so the saving process never holds both at once.
class MomentSource {
 public:
  virtual ~MomentSource() = default;
  // The whole moment `which` (0: m, 1: v) in the store's flat layout, valid
  // until the next call. save_checkpoint asks for m, then v, once each.
  virtual const float* moment(int which) = 0;
};

// Writes `path` atomically: a temporary file beside it, flushed and fsynced,
// then renamed over `path`, so a crash at any moment leaves either the old
// file or the new one. Writes /optimizer moments only when with_optimizer,
// from `moments` when given, else from store.m and store.v.
// Throws tg::DataError with a one-line message on any failure, leaving an
// existing `path` untouched and no temporary file behind.
void save_checkpoint(const std::string& path, const Checkpoint& meta,
                     const nn::ParameterStore& store, bool with_optimizer = true,
                     MomentSource* moments = nullptr);

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

// The config and /train state of `path` without reading any dataset (cheap
// for any model size): to see which run a checkpoint belongs to. Throws
// tg::DataError naming the file when it is not a readable checkpoint.
Checkpoint read_metadata(const std::string& path);

// One dataset as `tapegpt inspect` reports it.
struct DatasetReport {
  std::string path;                       // "/model/transformer.wte.weight"
  std::vector<int64_t> shape;
  std::string dtype;                      // "float32", "int64", "uint8", ...
  double norm = 0;                        // L2 norm of the values
  bool checksummed = false;               // carries a Fletcher32 checksum
  std::string error;                      // why it did not read; "" when it did
};

struct Inspection {
  int64_t format_version = 0;
  Checkpoint meta;                        // tokenizer.tokens and merges left empty
  int64_t n_tokens = 0, n_merges = 0;
  bool has_moments = false;
  std::vector<DatasetReport> datasets;    // model, moments, tokenizer, in file order
};

// Reads the metadata of `path` and then every dataset, each verified against
// its checksum. Throws tg::DataError (naming the file) when the metadata
// cannot be read; a dataset that fails is reported in its DatasetReport, so
// the caller can show every damaged one.
Inspection inspect_checkpoint(const std::string& path);

}  // namespace checkpoints
