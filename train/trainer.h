// train/: the training library, namespace train. One optimizer step lives in
// train_step.h (sampler → forward → loss → backward → all-reduce seam →
// clip → AdamW → zeroing, with optimizer.h and token_batches.h); around it
// the loop (this file), the schedule (lr_schedule.h), evaluation, metrics,
// run directories and the checkpoint glue; TrainOptions and the table of
// training flags (options.h, train_flags.h); presets, the parameter table
// and the benchmark driver (bench.h). The command line is train/cli/, the
// pictures train/viz/; neither is used from here.
//
// The training loop: one TrainStep after another, with the learning-rate
// schedule, logging, periodic validation and atomic checkpoints. Knows the
// model and the checkpoint *contents*, not HDF5.
#pragma once

#include <cstdint>
#include <string>

#include "checkpoints/checkpoint.h"
#include "data/tokenizer_spec.h"
#include "nn/gpt.h"
#include "train/options.h"
#include "train/train_step.h"

namespace train {

class Distributed;

// What changes as a run goes on is checkpoints::TrainState: the trainer
// keeps it and saves it as it is (step, tokens seen, RNG, sampler position,
// best validation loss, run id), with the run's seed, data hash, directory
// and flags filled in at each save.

// The state a new run starts from (--init-from included): step 0, no
// validation yet, a fresh run id, and the batch/dropout stream of `seed`.
checkpoints::TrainState new_run_state(uint64_t seed);

// Runs `options` on `model` from `state` until max_steps, a signal, or a
// non-finite loss. Returns the process exit code (0 on success and on a
// graceful stop; 1 when training diverged). Throws tg::DataError on I/O
// failures (the previous checkpoint is then still intact).
// A resumed run (`resumed`) on token files other than state.data_hash says
// is refused unless allow_data_change. Under mpirun every process calls it
// and they train together (Note [Data parallelism] in
// distributed/distributed.h; the step's seam: Note [Gradient all-reduce
// seam] in train_step.h).
// `dist` is the job (one process unless run by mpirun), joined by the
// command before it planned.
int run_training(const TrainOptions& options, nn::GPT& model,
                 const data::TokenizerSpec& tokenizer, checkpoints::TrainState state, bool resumed,
                 bool allow_data_change, Distributed& dist);

// Bytes the run will hold, for the estimate printed before the first step.
struct MemoryEstimate {
  int64_t parameters = 0, gradients = 0, moments = 0, activations = 0;
  int64_t total() const { return parameters + gradients + moments + activations; }
};
MemoryEstimate estimate_memory(const nn::GPT& model, int64_t batch_size);

}  // namespace train
