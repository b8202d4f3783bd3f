// One optimizer step — the only one. The trainer, `tapegpt bench`, the
// no-allocation test and the PyTorch parity dump all run TrainStep::run, and
// train_step.cpp reads top to bottom as the step itself: sampler → taped
// forward → loss → backward, over K micro-batches → gradient all-reduce
// (Note [Gradient all-reduce seam]) → clip → AdamW (or Muon) → zeroing.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "autograd/arena.h"
#include "autograd/planner.h"
#include "autograd/base/rng.h"
#include "autograd/tape.h"
#include "nn/gpt.h"
#include "train/optimizer.h"

namespace train {

class OptimizerShard;  // distributed/optimizer_shard.h

// Where micro-batches come from: the run's token file (TokenFileBatches),
// synthetic tokens (bench), a fixed batch (tests, parity).
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // Fills inputs[B*T] and targets[B*T] (row-major, B rows of T); may draw
  // from rng, the run's one random stream.
  virtual void fill(int32_t* inputs, int32_t* targets, tg::Rng& rng) = 0;
  // Takes the draws fill() would take, for a micro-batch another process
  // runs (Note [Data parallelism]); a source may skip reading the tokens.
  virtual void skip(int32_t* inputs, int32_t* targets, tg::Rng& rng) { fill(inputs, targets, rng); }
};

// Note [Gradient all-reduce seam]: after the last micro-batch's backward
// every process holds the gradient of its own batches in store.grads. Data-
// parallel training sums them across processes right there, before the
// norm is measured, so every process clips and updates identically. One
// process has nothing to do (the default: no reducer). A reducer may also
// give each process its share of the K micro-batches, and start sums while
// the last backward is still running (train/distributed/data_parallel.h).
class GradientReducer {
 public:
  virtual ~GradientReducer() = default;
  // Whether this process runs micro-batch k of K; the others are skipped.
  virtual bool runs_micro_batch(int64_t /*k*/, int64_t /*K*/) const { return true; }
  // Before the backward of this process's last micro-batch: a callback for
  // the tape to call after each entry (null for none).
  virtual const std::function<void(size_t)>* during_last_backward(const autograd::Tape&) { return nullptr; }
  virtual void reduce(nn::ParameterStore& store) = 0;
  // The loss: this process's sum over its micro-batches in, the sum over
  // all processes out.
  virtual double reduce_loss(double local_loss_sum) { return local_loss_sum; }
};

struct StepShape {
  int64_t batch_size = 1;        // B sequences per micro-batch
  int64_t time = 1;              // T tokens per sequence (at most block_size)
  int64_t grad_accum = 1;        // K micro-batches per optimizer step
};

struct StepResult {
  double loss = 0;               // mean over the K micro-batches
  double grad_norm = 0;          // of the summed gradient, before clipping
  bool applied = false;          // false: loss or norm not finite, weights untouched
  double optimizer_seconds = 0;  // clip + AdamW + zeroing (bench reports it)
};

class TrainStep {
 public:
  // One micro-batch is planned up front (nn::gpt_training_plan) and the arena
  // sized from the plan, so a step allocates nothing on the heap once the
  // tape has its capacity (tests/nn/test_no_alloc.cpp).
  TrainStep(nn::GPT& model, const StepShape& shape);

  // Runs one step as optimizer step number `step` (1-based, AdamW's bias
  // correction) with learning rate lr. Draws the batches and each micro-
  // batch's dropout seed from rng, in that order.
  StepResult run(BatchSource& batches, tg::Rng& rng, const AdamWConfig& adamw, float lr, int64_t step);

  // Null (the default) for one process; see Note [Gradient all-reduce seam].
  void set_gradient_reducer(GradientReducer* reducer) { reducer_ = reducer; }
  // Null (the default): AdamW over every parameter with the store's moments.
  // Else this rank's slice only, then the all-gather (Note [Sharded
  // optimizer state] in distributed/optimizer_shard.h).
  void set_optimizer_shard(OptimizerShard* shard) { shard_ = shard; }
  // Null (the default): AdamW over every parameter. Else Muon over the
  // blocks' matrices and AdamW over the rest (Note [Muon] in optimizer.h),
  // lr being Muon's; never with a shard.
  void set_muon(Muon* muon) { muon_ = muon; }

  // The activation arena, free between steps: evaluation reuses it.
  autograd::Arena& arena() { return arena_; }
  // The memory plan every micro-batch runs under, and the last one's tape.
  const autograd::MemoryPlan& plan() const { return plan_; }
  const autograd::Tape& tape() const { return tape_; }

 private:
  nn::GPT& model_;
  StepShape shape_;
  autograd::MemoryPlan plan_;
  autograd::Arena arena_;
  autograd::Tape tape_;
  std::vector<int32_t> inputs_, targets_;
  GradientReducer* reducer_ = nullptr;
  OptimizerShard* shard_ = nullptr;
  Muon* muon_ = nullptr;
};

}  // namespace train
