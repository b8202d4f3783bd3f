// Note [Memory planner]: a planned step gives the bits an eager one gives
// (every buffer of its own, gradients zeroed up front), although its buffers
// share floats, its LayerNorm and GELU outputs are recomputed in backward and
// the logits' gradient lies over the logits; and no two buffers alive at the
// same time share a float. In bf16 too (Note [bf16 linear]): its linears
// round each output gradient over itself and keep x's backward copy in the
// half that freed where it fits. Then one test per reuse policy (Note
// [Buffer reuse]): granted where safe, refused elsewhere, never a clash.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "autograd/kernels/bf16.h"
#include "autograd/ops.h"
#include "autograd/planner.h"
#include "support/gradcheck.h"
#include "support/no_skip.h"
#include "support/plan_checks.h"
#include "support/split_weights.h"

using autograd::BufferRole;
using autograd::EntryUses;
using autograd::MemoryPlan;
using autograd::OpContext;
using autograd::Reuse;
using autograd::Tape;
using autograd::Tensor;

namespace {

struct Leaf {
  std::vector<float> data, grad;
  Tensor view(std::initializer_list<int64_t> shape) {
    grad.assign(data.size(), 0.0f);
    return autograd::tensor_view(data.data(), grad.data(), shape);
  }
};

Leaf random_leaf(int64_t n, tg::Rng& rng) {
  return Leaf{testing::to_float(testing::random_vector<double>(n, rng)), {}};
}

// Buffers lying in another's floats by the given reuse (Note [Buffer reuse]).
int granted(const Tape& tape, const MemoryPlan& plan, Reuse reuse) {
  int n = 0;
  for (size_t b = 0; b < tape.buffers().size(); ++b) n += plan.alias[b] >= 0 && tape.buffers()[b].reuse == reuse;
  return n;
}

// Runs `loss_of(ctx)` on an eager tape and on a plan of its own graph
// (floats nobody wrote read as NaN, so a clobbered buffer spreads), checks
// that no live buffers clash and that the loss and the leaves' gradients have
// the same bits both ways, and hands the planned tape and plan to `inspect`.
template <class LossOf, class Inspect>
void check_planned_step(const LossOf& loss_of, const std::vector<Leaf*>& leaves, const Inspect& inspect) {
  auto run = [&](bool planned) {
    autograd::Arena arena;
    Tape tape;
    MemoryPlan plan;
    std::vector<float> block;
    if (planned) {
      tape.begin_planning();
      loss_of(OpContext(&arena, &tape));
      plan = autograd::plan_memory(tape);
      block.assign(static_cast<size_t>(plan.total_floats), std::nanf(""));
      tape.clear();
      tape.use_plan(plan, block.data());
      CHECK(testing::clashing_buffer_pairs(tape, plan) == 0);
    }
    const Tensor loss = loss_of(OpContext(&arena, &tape));
    tape.backward(loss);
    if (planned) inspect(tape, plan);
    std::vector<std::vector<float>> results{{loss.data[0]}};
    for (const Leaf* l : leaves) results.push_back(l->grad);
    return results;
  };
  const auto eager = run(false), planned = run(true);
  for (size_t i = 0; i < eager.size(); ++i) {
    INFO("result " << i << " (0: the loss, then each leaf's gradient)");
    CHECK(std::any_of(eager[i].begin(), eager[i].end(), [](float v) { return v != 0.0f; }));
    CHECK(std::memcmp(eager[i].data(), planned[i].data(), eager[i].size() * sizeof(float)) == 0);
  }
}

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
  auto leaf = [&](int64_t n) { return random_leaf(n, rng); };
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
    if (planned) {
      // The logits' gradient over the logits; x's backward copy in dout's
      // freed half for the two linears with IC ≤ OC (C→H and the head), not
      // for H→C, where it does not fit.
      CHECK(granted(tape, plan, Reuse::OverData) == 1);
      CHECK(granted(tape, plan, Reuse::OutputGradTail) == (bf16 ? 2 : 0));
    }
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

TEST_CASE("Reuse::OverData: a gradient over its data where its one consumer asks and nothing reads the data after",
          "[planner]") {
  const int64_t B = 2, T = 3, C = 4, N = B * T;
  tg::Rng rng(5);
  Leaf x = random_leaf(N * C, rng), head = random_leaf(C * C, rng), wqkv = random_leaf(3 * C * C, rng);
  std::vector<int32_t> targets(N);
  for (int32_t& t : targets) t = static_cast<int32_t>(rng.below(C));
  auto over_data = [](const Tape& tape, const MemoryPlan& plan) {
    int n = 0;
    for (const autograd::TapeTensor& t : tape.tensors()) n += plan.alias[static_cast<size_t>(t.grad)] == t.data;
    return n;
  };

  SECTION("granted: the logits' one consumer writes their gradient over them") {
    check_planned_step(
        [&](const OpContext& ctx) {
          Tensor logits = autograd::linear(ctx, x.view({N, C}), head.view({C, C}), Tensor{});
          return autograd::cross_entropy(ctx, std::move(logits), targets.data());
        },
        {&x, &head},
        [&](const Tape& tape, const MemoryPlan& plan) {
          CHECK(over_data(tape, plan) == 1);
          // And the check sees the loss laid over the logits, which live on.
          MemoryPlan wrong = plan;
          const autograd::TapeTensor &logits = tape.tensors()[0], &loss = tape.tensors()[1];
          wrong.offset[static_cast<size_t>(loss.data)] = plan.offset[static_cast<size_t>(logits.data)];
          CHECK(testing::clashing_buffer_pairs(tape, wrong) > 0);
        });
  }
  SECTION("granted twice: a logit soft-cap before the loss writes the raw logits' gradient over them") {
    check_planned_step(
        [&](const OpContext& ctx) {
          const Tensor logits = autograd::linear(ctx, x.view({N, C}), head.view({C, C}), Tensor{});
          return autograd::cross_entropy(ctx, autograd::softcap(ctx, logits, 2.0f), targets.data());
        },
        {&x, &head},
        [&](const Tape& tape, const MemoryPlan& plan) {
          CHECK(over_data(tape, plan) == 2);
          CHECK_FALSE(plan.recomputed[1]);  // a rerun would overwrite the probabilities
        });
  }
  SECTION("refused: another consumer reads the logits") {
    check_planned_step(
        [&](const OpContext& ctx) {
          Tensor logits = autograd::linear(ctx, x.view({N, C}), head.view({C, C}), Tensor{});
          autograd::gelu(ctx, logits);  // read before the loss overwrites them; its result unused
          return autograd::cross_entropy(ctx, std::move(logits), targets.data());
        },
        {&x, &head}, [&](const Tape& tape, const MemoryPlan& plan) { CHECK(over_data(tape, plan) == 0); });
  }
  SECTION("refused: the producer's backward reads the data (attention reads its output)") {
    check_planned_step(
        [&](const OpContext& ctx) {
          Tensor qkv = autograd::linear(ctx, x.view({B, T, C}), wqkv.view({3 * C, C}), Tensor{});
          return autograd::cross_entropy(ctx, autograd::attention(ctx, qkv, 2), targets.data());
        },
        {&x, &wqkv}, [&](const Tape& tape, const MemoryPlan& plan) { CHECK(over_data(tape, plan) == 0); });
  }
}

namespace {

// An op of this test alone: no kernel, only buffers for the planner.
struct NoKernelRecord {
  static constexpr const char* kName = "no_kernel";
  void forward() const {}
  void backward() const {}
};

}  // namespace

TEST_CASE("Reuse::OutputGradTail: a backward scratch in its output gradient's freed half where it fits",
          "[planner]") {
  autograd::Arena arena;
  Tape tape;
  tape.begin_planning();
  // An entry reading `in`, making [out_floats] and asking for backward
  // scratch in its output gradient's tail; returns (output, scratch's buffer).
  auto op = [&](const Tensor* in, int64_t out_floats, int64_t scratch_floats) {
    Tensor out = autograd::tensor_view(nullptr, nullptr, {out_floats});
    tape.new_tensor(arena, out);
    const auto scratch = static_cast<int32_t>(tape.buffers().size());
    tape.new_buffer(arena, scratch_floats, BufferRole::BackwardScratch, Reuse::OutputGradTail);
    tape.record(NoKernelRecord{}, out, in ? EntryUses{in}.saves(*in) : EntryUses{});
    return std::make_pair(out, scratch);
  };
  const auto a = op(nullptr, 100, 50);  // the tail [50, 100): fits exactly
  const auto b = op(&a.first, 101, 50);  // [51, 101): fits
  const auto c = op(&b.first, 101, 51);  // one float too many: its own floats
  op(&c.first, 64, 8);
  const MemoryPlan plan = autograd::plan_memory(tape);
  auto grad_of = [&](const Tensor& t) { return tape.tensors()[static_cast<size_t>(t.id)].grad; };
  auto at = [&](int32_t buffer) { return plan.offset[static_cast<size_t>(buffer)]; };
  CHECK(plan.alias[static_cast<size_t>(a.second)] == grad_of(a.first));
  CHECK(at(a.second) == at(grad_of(a.first)) + 50);
  CHECK(plan.alias[static_cast<size_t>(b.second)] == grad_of(b.first));
  CHECK(at(b.second) == at(grad_of(b.first)) + 51);
  CHECK(plan.alias[static_cast<size_t>(c.second)] == -1);
  CHECK(testing::clashing_buffer_pairs(tape, plan) == 0);
  // And the check sees a scratch laid over the half its backward still reads.
  MemoryPlan wrong = plan;
  wrong.offset[static_cast<size_t>(a.second)] = at(grad_of(a.first));
  CHECK(testing::clashing_buffer_pairs(tape, wrong) > 0);
}
