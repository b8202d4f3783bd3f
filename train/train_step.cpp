// One optimizer step (see train_step.h), in the order it runs.
#include "train/train_step.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <utility>

#include "autograd/base/check.h"
#include "autograd/ops.h"
#include "autograd/planner.h"
#include "train/distributed/optimizer_shard.h"

namespace train {

TrainStep::TrainStep(nn::GPT& model, const StepShape& shape)
    : model_(model),
      shape_(shape),
      plan_(nn::gpt_training_plan(model, shape.batch_size, shape.time)),
      arena_(plan_.total_floats),
      inputs_(static_cast<size_t>(shape.batch_size * shape.time)),
      targets_(inputs_.size()) {}

StepResult TrainStep::run(BatchSource& batches, tg::Rng& rng, const AdamWConfig& adamw, float lr,
                          int64_t step) {
  const int64_t B = shape_.batch_size, T = shape_.time, K = shape_.grad_accum;
  nn::ParameterStore& store = model_.store;  // gradients start at zero: the last step left them so
  StepResult r;
  double loss_sum = 0.0;
  int64_t last_own = K - 1;  // this process's last micro-batch
  while (reducer_ && last_own > 0 && !reducer_->runs_micro_batch(last_own, K)) --last_own;
  for (int64_t k = 0; k < K; ++k) {
    if (reducer_ && !reducer_->runs_micro_batch(k, K)) {
      // Another process's micro-batch: take its draws, read nothing.
      batches.skip(inputs_.data(), targets_.data(), rng);
      rng.next_u64();  // its dropout seed
      continue;
    }
    // 1. Sampler: one micro-batch, then its dropout seed, from the run's stream.
    batches.fill(inputs_.data(), targets_.data(), rng);
    const uint64_t dropout_seed = rng.next_u64();
    // 2. Forward, taped, into the planned arena block (Note [Memory planner]).
    arena_.reset();
    tape_.clear();
    tape_.use_plan(plan_, arena_.alloc(plan_.total_floats));
    const autograd::OpContext ctx{&arena_, &tape_, nn::run_precision(store)};  // Note [Run precision]
    // 3. Loss: mean cross-entropy over the B*T targets.
    const autograd::Tensor loss =
        nn::gpt_loss(ctx, model_, inputs_.data(), targets_.data(), B, T, dropout_seed);
    // 4. Backward: adds into store.grads, each micro-batch 1/K of the mean gradient.
    const std::function<void(size_t)>* after_entry =
        reducer_ && k == last_own ? reducer_->during_last_backward(tape_) : nullptr;
    if (after_entry) tape_.backward(loss, 1.0f / static_cast<float>(K), *after_entry);
    else tape_.backward(loss, 1.0f / static_cast<float>(K));
    loss_sum += loss.data[0];
  }

  // 5. All-reduce across processes: Note [Gradient all-reduce seam].
  if (reducer_) {
    reducer_->reduce(store);
    loss_sum = reducer_->reduce_loss(loss_sum);
  }
  r.loss = loss_sum / static_cast<double>(K);

  // 6. Clip: the global norm decides the factor every gradient is scaled by.
  const auto t_opt = std::chrono::steady_clock::now();
  r.grad_norm = shard_ ? shard_->grad_norm(store) : grad_norm(store);
  if (!std::isfinite(r.loss) || !std::isfinite(r.grad_norm)) return r;  // diverged: weights untouched
  const float clip = clip_factor(adamw, r.grad_norm);
  // 7. AdamW over the flat buffers, reading each gradient times `clip`, and
  // 8. zeroing: the same pass leaves every gradient 0 for the next step
  //    (Note [Fused optimizer pass] in optimizer.h). Sharded: this rank's
  //    slice, then the all-gather (Note [Sharded optimizer state]).
  //    Muon: Note [Muon] in optimizer.h. A bf16 run's matmuls read the
  //    weights' bf16 copies: the same pass rounds each new weight into its
  //    copy, once per step, not at every matmul (Note [bf16 linear]).
  TG_CHECK(!(shard_ && muon_));
  if (shard_) shard_->update(store, adamw, lr, step, clip);
  else if (muon_) muon_->update(store, adamw, lr, step, clip);
  else adamw_update(store, adamw, lr, step, clip);
  r.applied = true;
  r.optimizer_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_opt).count();
  return r;
}

}  // namespace train
