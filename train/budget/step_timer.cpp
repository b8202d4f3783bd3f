// Measuring a candidate's training step (see step_timer.h).
#include "train/budget/step_timer.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "autograd/base/rng.h"
#include "nn/gpt.h"
#include "train/distributed/data_parallel.h"
#include "train/distributed/distributed.h"
#include "train/optimizer.h"
#include "train/precision.h"
#include "train/train_step.h"

namespace train {

namespace {

// Any tokens do: a step's time does not depend on their values.
class SyntheticTokens : public BatchSource {
 public:
  SyntheticTokens(int64_t vocab, int64_t n) : vocab_(static_cast<uint64_t>(vocab)), n_(n) {}
  void fill(int32_t* inputs, int32_t* targets, tg::Rng& rng) override {
    for (int64_t i = 0; i < n_; ++i) {
      inputs[i] = static_cast<int32_t>(rng.next_u64() % vocab_);
      targets[i] = static_cast<int32_t>(rng.next_u64() % vocab_);
    }
  }

 private:
  uint64_t vocab_;
  int64_t n_;
};

}  // namespace

double measure_step_seconds(const TrainOptions& options, Distributed* dist, int timed_steps) {
  TrainOptions o = options;
  resolve_precision(&o);
  nn::GPT model = nn::gpt_create(o.model, nn::parameter_store_create(o.model, true));
  model.store.m.resize(model.store.total);
  model.store.v.resize(model.store.total);
  nn::gpt_init(model, o.seed);
  set_precision(model.store, precision_of_saved(o.precision));
  TrainStep step(model, StepShape{o.batch_size, o.model.block_size, o.grad_accum});
  std::unique_ptr<DataParallelReducer> reducer;
  if (dist && dist->size() > 1) {
    reducer = std::make_unique<DataParallelReducer>(*dist, model.store, o.overlap_allreduce);
    step.set_gradient_reducer(reducer.get());
  }
  std::unique_ptr<Muon> muon;
  if (o.optimizer == OptimizerKind::Muon) {
    muon = std::make_unique<Muon>(model.store, o.muon, o.schedule.lr);
    step.set_muon(muon.get());
  }
  SyntheticTokens tokens(o.model.vocab_size, o.batch_size * o.model.block_size);
  tg::Rng rng(o.seed);
  std::vector<double> times;
  for (int s = 0; s <= timed_steps; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    // A small rate: the synthetic tokens must not drive the weights anywhere odd.
    step.run(tokens, rng, o.adamw, 1e-5f, s + 1);
    if (s > 0) times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace train
