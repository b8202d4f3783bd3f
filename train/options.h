// TrainOptions: every setting of a training run. They are saved in the
// checkpoint (/train/flags) so that `train --resume CKPT` needs no flags;
// the flags that set them: Note [Training flags] in train_flags.h.
#pragma once

#include <cstdint>
#include <string>

#include "nn/config.h"
#include "train/lr_schedule.h"
#include "train/optimizer.h"

namespace train {

struct TrainOptions {
  std::string data_dir;
  std::string out_dir;
  nn::GPTConfig model;
  int64_t batch_size = 12;
  int64_t grad_accum = 1;
  int64_t max_steps = 2000;
  LrSchedule schedule;          // lr, min_lr, warmup, decay_steps, shape, decay_frac
  AdamWConfig adamw;            // betas, eps, weight_decay, grad_clip
  OptimizerKind optimizer = OptimizerKind::AdamW;  // Note [Muon] in optimizer.h
  MuonConfig muon;              // momentum, AdamW's learning rate (with muon only)
  uint64_t seed = 1337;
  std::string sampler = "random";  // random | sequential
  int64_t eval_interval = 250;
  int64_t eval_steps = 20;      // batches of batch_size windows per evaluation, spread over val.bin (0 = all of it)
  int64_t ckpt_interval = 500;
  int64_t keep = 2;             // periodic ckpt-STEP.h5 files kept (0 = none)
  bool zero_init_proj = false;  // residual projections start at zero (nn::InitOptions)
  std::string preset;           // the --preset the run started from ("" = none; informational)
  // --budget (Note [Budget plan] in budget/plan.h), saved: the duration as
  // given ("" = none), what it fitted ("all" or "steps"), and the plan's
  // choices with their reasons, one per line.
  std::string budget;
  std::string budget_fit = "all";
  std::string budget_plan;
  // The budget's clock (Note [Budget everywhere] in budget/plan.h), saved:
  // seconds of the budget spent when the checkpoint was written, and the
  // plan's deadlines on that clock (0: no guard). The clock stops while no
  // process runs the run.
  double budget_spent_s = 0;
  double budget_deadline_s = 0;    // when the last step should end
  double budget_hard_deadline_s = 0;  // the latest it may end, the final evaluation and save kept aside
  // The matmuls' precision: "fp32" or "bf16" once the command resolved the
  // user's --precision (train/precision.h); "auto" only before that. Saved,
  // so a resume keeps it; changing it needs --change-precision.
  std::string precision = "auto";
  std::string precision_reason;  // why (the train header); not saved
  int threads = 0;              // 0 = all cores (not saved: any count resumes)
  bool overlap_allreduce = true;  // with mpirun: sum gradients during the backward (not saved)
  bool shard_optimizer = false;  // with mpirun: Note [Sharded optimizer state] (not saved)
  // With mpirun: Note [Stall timeout] in distributed/distributed_mpi.cpp (not saved).
  double stall_timeout_s = 300.0;
  // Not saved: this process's time before the first step (--budget's
  // measurements, loading).
  double seconds_before_loop = 0;
  // Not saved: how this invocation treats the run directory.
  bool replace_run = false;     // a new run (or --overwrite): its first row retires the old files
  std::string resumed_from;     // the checkpoint a resumed run started from
};

// Tokens one optimizer step consumes.
inline int64_t tokens_per_step(const TrainOptions& o) {
  return o.batch_size * o.grad_accum * o.model.block_size;
}

// Empty if the options make sense together, else one sentence for the user.
std::string options_error(const TrainOptions& o);

}  // namespace train
