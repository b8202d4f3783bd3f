// The training step's all-reduce seam (Note [Gradient all-reduce seam]):
// called once per step, after every micro-batch's backward, before the
// update reads the gradients.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/kernels/bf16.h"
#include "autograd/kernels/split_master.h"
#include "nn/gpt.h"
#include "nn/model_fixture.h"
#include "support/no_skip.h"
#include "train/optimizer.h"
#include "train/precision.h"
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
  const std::vector<float> before(m.store.values.floats(), m.store.values.floats() + m.store.total);
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
  CHECK(std::equal(before.begin(), before.end(), m.store.values.floats()));
}

TEST_CASE("after a bf16 step every weight's bf16 copy is the new weight rounded", "[step][bf16]") {
  // The optimizer's pass writes the split masters, copies included
  // (train/optimizer.h); the next forward reads the copies. Checked over
  // every 2-D tensor, after AdamW and after Muon (its matrices' pass and
  // AdamW's over the rest).
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
    nn::set_precision(m.store, train::Precision::Bf16);
    RandomTokens batches(2 * c.block_size, c.vocab_size);
    train::TrainStep step(m, train::StepShape{2, c.block_size, 1});
    train::Muon optimizer(m.store, train::MuonConfig{}, 1e-2);
    if (muon) step.set_muon(&optimizer);
    REQUIRE(m.store.precision() == autograd::Precision::Bf16);
    const int64_t n = m.store.n_decay;
    const std::vector<uint16_t> hi0(m.store.values.hi(), m.store.values.hi() + n);
    std::vector<float> before(static_cast<size_t>(n)), after(static_cast<size_t>(n));
    kernels::join_master(before.data(), m.store.values.hi(), m.store.values.lo(), n);
    tg::Rng rng(1);
    const train::AdamWConfig adamw;
    for (int64_t s = 1; s <= 2; ++s) REQUIRE(step.run(batches, rng, adamw, 1e-2f, s).applied);
    kernels::join_master(after.data(), m.store.values.hi(), m.store.values.lo(), n);
    std::vector<uint16_t> copies(static_cast<size_t>(n));
    kernels::round_to_bf16(copies.data(), after.data(), n);
    // Every 2-D tensor was updated through its planes: most copies and
    // nearly every master moved (lr 1e-2 against weights of about 0.02),
    // the copies are the masters rounded, and no plane holds a float's bits
    // (the masters stay finite and small).
    for (const nn::ParamInfo& p : m.store.table) {
      if (!p.decay) continue;
      INFO(p.name);
      int64_t copy_moved = 0, master_moved = 0, stale_copy = 0, wild = 0;
      for (int64_t i = p.offset; i < p.offset + p.numel; ++i) {
        copy_moved += m.store.values.hi()[i] != hi0[static_cast<size_t>(i)];
        master_moved += after[static_cast<size_t>(i)] != before[static_cast<size_t>(i)];
        stale_copy += m.store.values.hi()[i] != copies[static_cast<size_t>(i)];
        wild += !(std::fabs(after[static_cast<size_t>(i)]) < 1.0f);
      }
      CHECK(copy_moved > p.numel / 2);
      CHECK(master_moved > p.numel * 9 / 10);
      CHECK(stale_copy == 0);
      CHECK(wild == 0);
    }
  }
}
