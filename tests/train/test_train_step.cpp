// The training step's all-reduce seam (Note [Gradient all-reduce seam]):
// called once per step, after every micro-batch's backward, before the
// update reads the gradients.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "autograd/kernels/bf16.h"
#include "nn/gpt.h"
#include "nn/model_fixture.h"
#include "support/no_skip.h"
#include "train/optimizer.h"
#include "train/train_step.h"

namespace {

class RandomTokens : public train::BatchSource {
 public:
  RandomTokens(int64_t n, int64_t vocab_size) : n_(n), V_(static_cast<uint64_t>(vocab_size)) {}
  void fill(int32_t* inputs, int32_t* targets, tg::Rng& rng) override {
    for (int64_t i = 0; i < n_; ++i) {
      inputs[i] = static_cast<int32_t>(rng.below(V_));
      targets[i] = static_cast<int32_t>(rng.below(V_));
    }
  }

 private:
  int64_t n_;
  uint64_t V_;
};

// Records what it saw, then replaces the gradient by zero.
class ZeroingReducer : public train::GradientReducer {
 public:
  int calls = 0;
  bool saw_gradient = false;
  void reduce(nn::ParameterStore& store) override {
    ++calls;
    saw_gradient = std::any_of(store.grads.data(), store.grads.data() + store.total,
                               [](float g) { return g != 0.0f; });
    std::fill(store.grads.data(), store.grads.data() + store.total, 0.0f);
  }
};

}  // namespace

TEST_CASE("the reducer sees the whole gradient once per step, before the update", "[step]") {
  const nn::GPTConfig c = testing::tiny_config();
  nn::GPT m = nn::gpt_create(c);
  nn::gpt_init(m, 3);
  const std::vector<float> before(m.store.params.data(), m.store.params.data() + m.store.total);
  RandomTokens batches(2 * c.block_size, c.vocab_size);
  ZeroingReducer reducer;
  train::TrainStep step(m, train::StepShape{2, c.block_size, 3});
  step.set_gradient_reducer(&reducer);
  tg::Rng rng(1);
  train::AdamWConfig adamw;
  adamw.weight_decay = 0.0f;
  const train::StepResult r = step.run(batches, rng, adamw, 1e-2f, 1);
  CHECK(reducer.calls == 1);
  CHECK(reducer.saw_gradient);
  CHECK(r.applied);
  CHECK(r.grad_norm == 0.0);  // measured after the reducer
  // A zero gradient and no decay: AdamW moves nothing.
  CHECK(std::equal(before.begin(), before.end(), m.store.params.data()));
}

TEST_CASE("after a bf16 step every weight's bf16 copy is the new weight rounded", "[step][bf16]") {
  // The optimizer's pass writes the copies (train/optimizer.h); the next
  // forward reads them. Checked over the whole store, after AdamW and after
  // Muon (its matrices' pass and AdamW's over the rest).
  if (!kernels::bf16_matmul_available()) {
    if (test_support::no_skip()) FAIL("oneDNN has no bf16 matmul here, under TAPEGPT_NO_SKIP=1");
    WARN("oneDNN has no bf16 matmul here: the bf16 step is not checked");
    return;
  }
  for (const bool muon : {false, true}) {
    INFO((muon ? "Muon" : "AdamW"));
    const nn::GPTConfig c = testing::tiny_config();
    nn::GPT m = nn::gpt_create(c);
    nn::gpt_init(m, 3);
    nn::gpt_set_precision(m, nn::Precision::Bf16);
    RandomTokens batches(2 * c.block_size, c.vocab_size);
    train::TrainStep step(m, train::StepShape{2, c.block_size, 1});
    train::Muon optimizer(m.store, train::MuonConfig{}, 1e-2, true);
    if (muon) step.set_muon(&optimizer);
    tg::Rng rng(1);
    const train::AdamWConfig adamw;
    for (int64_t s = 1; s <= 2; ++s) REQUIRE(step.run(batches, rng, adamw, 1e-2f, s).applied);
    std::vector<uint16_t> want(m.store.total);
    kernels::round_to_bf16(want.data(), m.store.params.data(), m.store.total);
    CHECK(std::equal(want.begin(), want.end(), m.store.params_bf16.data()));
  }
}
