// Note [Memory planner]: a planned step gives the bits an eager one gives
// (every buffer of its own, gradients zeroed up front), although its buffers
// share floats, its LayerNorm and GELU outputs are recomputed in backward and
// the logits' gradient lies over the logits; and no two buffers alive at the
// same time share a float. In bf16 too (Note [bf16 linear]): its linears
// keep backward scratch and round each output gradient over itself.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "autograd/kernels/bf16.h"
#include "autograd/ops.h"
#include "autograd/planner.h"
#include "support/gradcheck.h"
#include "support/no_skip.h"
#include "support/plan_checks.h"
#include "support/split_weights.h"

using autograd::OpContext;
using autograd::Tensor;

namespace {

struct Leaf {
  std::vector<float> data, grad;
  Tensor view(std::initializer_list<int64_t> shape) {
    grad.assign(data.size(), 0.0f);
    return autograd::tensor_view(data.data(), grad.data(), shape);
  }
};

}  // namespace

TEST_CASE("a planned step gives the bits of an eager one", "[planner]") {
  const bool bf16 = GENERATE(false, true);
  INFO((bf16 ? "bf16 linears" : "float32 linears"));
  if (bf16 && !kernels::bf16_matmul_available()) {
    if (test_support::no_skip()) FAIL("oneDNN has no bf16 matmul here, under TAPEGPT_NO_SKIP=1");
    WARN("oneDNN has no bf16 matmul here: the bf16 plan is not checked");
    return;
  }
  const int64_t N = 6, C = 4, H = 8, V = 5;
  tg::Rng rng(11);
  auto leaf = [&](int64_t n) {
    return Leaf{testing::to_float(testing::random_vector<double>(n, rng)), {}};
  };
  Leaf x = leaf(N * C), ln_w = leaf(C), w1 = leaf(H * C), b1 = leaf(H), w2 = leaf(C * H),
       head = leaf(V * C);
  std::vector<int32_t> targets(N);
  for (int32_t& t : targets) t = static_cast<int32_t>(rng.below(V));
  // In the bf16 run the linears' weights lie split, as a bf16 run's store
  // keeps them, and the ops learn the precision from their context.
  testing::SplitWeights split({&w1.data, &w2.data, &head.data});
  const autograd::RunPrecision precision = bf16 ? split.bf16_run() : autograd::RunPrecision{};
  auto weight = [&](Leaf& w, size_t i, std::initializer_list<int64_t> shape) {
    const Tensor t = w.view(shape);  // its gradient zeroed
    return bf16 ? split.view(i, t.grad, shape) : t;
  };

  // y = x + dropout(linear(gelu(linear(layernorm(x))))), loss = CE(linear(layernorm(y))):
  // a block's shape in small, every recomputable op and the loss included.
  auto loss_of = [&](const OpContext& ctx) {
    const Tensor xv = x.view({N, C}), lw = ln_w.view({C}), w1v = weight(w1, 0, {H, C}), b1v = b1.view({H}),
                 w2v = weight(w2, 1, {C, H}), hv = weight(head, 2, {V, C});
    Tensor h = autograd::layernorm(ctx, xv, lw, Tensor{});
    h = autograd::linear(ctx, h, w1v, b1v);
    h = autograd::gelu(ctx, h);
    h = autograd::linear(ctx, h, w2v, Tensor{});
    h = autograd::dropout(ctx, h, 0.25f, 99);
    const Tensor y = autograd::add(ctx, xv, h);
    Tensor logits = autograd::linear(ctx, autograd::layernorm(ctx, y, lw, Tensor{}), hv, Tensor{});
    return autograd::cross_entropy(ctx, std::move(logits), targets.data());
  };
  auto gradients = [&](bool planned) {
    autograd::Arena arena;
    autograd::Tape tape;
    autograd::MemoryPlan plan;
    std::vector<float> block;
    if (planned) {
      tape.begin_planning();
      loss_of(OpContext(&arena, &tape, precision));
      plan = autograd::plan_memory(tape);
      // Floats nobody wrote read as NaN and would spread to every gradient.
      block.assign(static_cast<size_t>(plan.total_floats), std::nanf(""));
      tape.clear();
      tape.use_plan(plan, block.data());
      CHECK(plan.total_floats < plan.unplanned_floats);
      CHECK(testing::clashing_buffer_pairs(tape, plan) == 0);
    }
    const Tensor loss = loss_of(OpContext(&arena, &tape, precision));
    tape.backward(loss);
    if (planned) {
      // Both LayerNorms and the GELU were run again in backward.
      int reruns = 0;
      for (size_t e = 0; e < tape.size(); ++e) reruns += plan.recomputed[e];
      CHECK(reruns == 3);
    }
    int bf16_linears = 0;  // the run chose the bf16 op
    for (size_t e = 0; e < tape.size(); ++e) bf16_linears += std::strcmp(tape.op_name(e), "linear_bf16") == 0;
    CHECK(bf16_linears == (bf16 ? 3 : 0));
    return std::vector<std::vector<float>>{{loss.data[0]}, x.grad,  ln_w.grad, w1.grad,
                                           b1.grad,        w2.grad, head.grad};
  };
  const auto eager = gradients(false), planned = gradients(true);
  REQUIRE(eager.size() == planned.size());
  for (size_t i = 0; i < eager.size(); ++i) {
    INFO("result " << i);
    CHECK(std::any_of(eager[i].begin(), eager[i].end(), [](float v) { return v != 0.0f; }));
    CHECK(std::memcmp(eager[i].data(), planned[i].data(), eager[i].size() * sizeof(float)) == 0);
  }
}

TEST_CASE("a planning pass runs no kernel", "[planner]") {
  // Addresses handed out while planning are never dereferenced: a kernel
  // run on them would fault, so getting here is the check.
  autograd::Arena arena;
  autograd::Tape tape;
  tape.begin_planning();
  std::vector<float> w(16, 1.0f), gw(16, 0.0f);
  const Tensor weight = autograd::tensor_view(w.data(), gw.data(), {4, 4});
  const OpContext ctx(&arena, &tape);
  Tensor h = autograd::linear(ctx, weight, weight, Tensor{});
  h = autograd::gelu(ctx, h);
  REQUIRE(tape.size() == 2);
  CHECK(!tape.runs_kernels());
  CHECK(tape.tensors()[1].producer == 1);
  CHECK(tape.entries()[1].inputs[0] == 0);
}
