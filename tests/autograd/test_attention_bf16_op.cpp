// The attention op on bf16 inputs (Note [bf16 attention inputs] in
// autograd/ops/attention.cpp): in a bf16 run (the precision in its context),
// where its input is what a bf16 linear made, its output and its gradient
// are exactly the bf16 flash kernels' (Note [bf16 attention products]) at
// qkv with v rounded to bf16, close to the float32 op's there, in a planned
// step as in an eager one; and the rounding kernels it uses.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "autograd/kernels/attention_flash.h"
#include "autograd/kernels/bf16.h"
#include "autograd/ops.h"
#include "autograd/planner.h"
#include "support/gradcheck.h"
#include "support/no_skip.h"
#include "support/plan_checks.h"
#include "support/split_weights.h"

using autograd::OpContext;
using autograd::Tensor;
using FVec = std::vector<float>;

namespace {

FVec random_floats(int64_t n, tg::Rng& rng, double scale = 1.0) {
  return testing::to_float(testing::random_vector<double>(n, rng, scale));
}

bool same_bits(const FVec& a, const FVec& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

FVec rounded_through_bf16(FVec x) {
  kernels::round_through_bf16(x.data(), static_cast<int64_t>(x.size()));
  return x;
}

struct Shape {
  int64_t B, T, C, NH;
  int64_t qkv_numel() const { return B * T * 3 * C; }
  int64_t out_numel() const { return B * T * C; }
};

struct AttentionRun {
  FVec out, dqkv, qkv_after;
  std::string op;
};

// attention(qkv) on an eager tape in a bf16 or float32 run, with dout as the
// output's gradient.
AttentionRun run_attention(const Shape& s, const FVec& qkv, bool bf16_run, const FVec& dout, float p) {
  AttentionRun r;
  r.qkv_after = qkv;
  r.dqkv.assign(qkv.size(), 0.0f);
  autograd::Arena arena;
  autograd::Tape tape;
  autograd::RunPrecision precision;
  precision.precision = bf16_run ? autograd::Precision::Bf16 : autograd::Precision::Fp32;
  const OpContext ctx(&arena, &tape, precision);
  const Tensor x = autograd::tensor_view(r.qkv_after.data(), r.dqkv.data(), {s.B, s.T, 3 * s.C});
  const Tensor out = autograd::attention(ctx, x, s.NH, p, 1234);
  std::memcpy(out.grad, dout.data(), dout.size() * sizeof(float));
  tape.replay_backward();
  r.out.assign(out.data, out.data + out.numel());
  r.op = tape.op_name(0);
  return r;
}

}  // namespace

TEST_CASE("round_through_bf16 gives round_to_bf16's values at every size", "[bf16][attention_bf16]") {
  tg::Rng rng(41);
  for (int64_t n : {0, 1, 17, 65536, 65537, 200003}) {
    INFO("n = " << n);
    FVec x = random_floats(n, rng, 3.0);
    if (n > 4) {  // the special values keep their meaning
      x[0] = std::numeric_limits<float>::infinity();
      x[1] = -0.0f;
      x[2] = std::nanf("");
      x[3] = 1e-41f;  // subnormal
    }
    std::vector<uint16_t> b(static_cast<size_t>(n));
    kernels::round_to_bf16(b.data(), x.data(), n);
    const FVec through = rounded_through_bf16(x);
    int64_t wrong = 0, moved = 0;
    for (int64_t i = 0; i < n; ++i) {
      uint32_t bits;
      std::memcpy(&bits, &through[static_cast<size_t>(i)], 4);
      wrong += bits != static_cast<uint32_t>(b[static_cast<size_t>(i)]) << 16;
      moved += i >= 4 && through[static_cast<size_t>(i)] != x[static_cast<size_t>(i)];
    }
    CHECK(wrong == 0);
    // Random floats almost never are bf16 values already: the rounding acted.
    if (n > 4) CHECK(moved > (n - 4) * 9 / 10);
  }
}

TEST_CASE("keep_qkv_v_bf16 keeps q and k, rounds v, and widen_kept_qkv rebuilds the same floats", "[bf16][attention_bf16]") {
  tg::Rng rng(44);
  const int64_t C = 256;
  for (int64_t N : {1, 7, 300}) {  // 300 rows run in parallel
    INFO("N = " << N);
    const FVec qkv = random_floats(N * 3 * C, rng);
    FVec qk(static_cast<size_t>(N * 2 * C)), wide(qkv.size()), wide_again(qkv.size(), -1.0f);
    std::vector<uint16_t> v(static_cast<size_t>(N * C));
    kernels::keep_qkv_v_bf16(qk.data(), v.data(), wide.data(), qkv.data(), N, C);
    kernels::widen_kept_qkv(wide_again.data(), qk.data(), v.data(), N, C);
    FVec want = qkv, want_qk, v_floats;
    std::vector<uint16_t> want_v(v.size());
    for (int64_t r = 0; r < N; ++r) {
      float* row = want.data() + r * 3 * C;
      kernels::round_through_bf16(row + 2 * C, C);
      want_qk.insert(want_qk.end(), row, row + 2 * C);
      kernels::round_to_bf16(want_v.data() + r * C, qkv.data() + r * 3 * C + 2 * C, C);
    }
    CHECK(same_bits(wide, want));
    CHECK(same_bits(wide_again, want));
    CHECK(same_bits(qk, want_qk));
    CHECK(v == want_v);
  }
}

// The bf16 flash kernels called directly, as the op calls them.
AttentionRun run_bf16_kernels(const Shape& s, const FVec& qkv, const FVec& dout, float p) {
  AttentionRun r;
  r.out.assign(static_cast<size_t>(s.out_numel()), 0.0f);
  r.dqkv.assign(qkv.size(), 0.0f);
  FVec lse(static_cast<size_t>(s.B * s.NH * s.T));
  kernels::attention_flash_forward_bf16(r.out.data(), lse.data(), qkv.data(), s.B, s.T, s.C, s.NH, p, 1234);
  kernels::attention_flash_backward_bf16(r.dqkv.data(), dout.data(), r.out.data(), qkv.data(), lse.data(), s.B,
                                         s.T, s.C, s.NH, p, 1234);
  return r;
}

// max |a - b| ≤ tol · max(1, max |b|).
bool close(const FVec& a, const FVec& b, double tol) {
  double scale = 1.0, worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    scale = std::max(scale, static_cast<double>(std::fabs(b[i])));
    worst = std::max(worst, static_cast<double>(std::fabs(a[i] - b[i])));
  }
  return a.size() == b.size() && worst <= tol * scale;
}

TEST_CASE("attention in a bf16 run is the bf16 kernels with v rounded to bf16", "[attention_bf16]") {
  const float p = GENERATE(0.0f, 0.3f);
  INFO("attention dropout " << p);
  const Shape s{2, 70, 16, 2};  // T past one 64-row block
  tg::Rng rng(42);
  const FVec qkv = random_floats(s.qkv_numel(), rng), dout = random_floats(s.out_numel(), rng);
  FVec qkv_rounded = qkv;  // v rounded, q and k as they are
  for (int64_t r = 0; r < s.B * s.T; ++r) kernels::round_through_bf16(qkv_rounded.data() + r * 3 * s.C + 2 * s.C, s.C);

  const AttentionRun bf16 = run_attention(s, qkv, true, dout, p);
  const AttentionRun kernels_at_rounded = run_bf16_kernels(s, qkv_rounded, dout, p);
  const AttentionRun float32_at_rounded = run_attention(s, qkv_rounded, false, dout, p);
  CHECK(bf16.op == "attention_bf16");
  CHECK(float32_at_rounded.op == "attention");
  CHECK(same_bits(bf16.out, kernels_at_rounded.out));
  CHECK(same_bits(bf16.dqkv, kernels_at_rounded.dqkv));
  CHECK(same_bits(bf16.qkv_after, qkv));  // the input is read, not rounded over
  // bf16 operands, float32 sums: the float32 op at the same point to
  // bf16's precision (1e-2 of the scale; test_attention_flash_bf16.cpp),
  // and not its bits (the products really are bf16).
  CHECK(close(bf16.out, float32_at_rounded.out, 1e-2));
  CHECK(close(bf16.dqkv, float32_at_rounded.dqkv, 1e-2));
  CHECK_FALSE(same_bits(bf16.out, float32_at_rounded.out));
  CHECK_FALSE(same_bits(bf16.dqkv, float32_at_rounded.dqkv));

  // Without a tape (inference) the forward is the same, probabilities included.
  if (p == 0.0f) {
    FVec probs(static_cast<size_t>(s.B * s.NH * s.T * s.T)), probs_rounded(probs.size());
    autograd::Arena arena;
    autograd::RunPrecision bf16_run;
    bf16_run.precision = autograd::Precision::Bf16;
    const OpContext infer(&arena, nullptr), infer_bf16(&arena, nullptr, bf16_run);
    FVec q = qkv, qr = qkv_rounded;
    const Tensor x = autograd::tensor_view(q.data(), nullptr, {s.B, s.T, 3 * s.C});
    const Tensor out = autograd::attention(infer_bf16, x, s.NH, 0.0f, 0, probs.data());
    const Tensor out_rounded = autograd::attention(
        infer, autograd::tensor_view(qr.data(), nullptr, {s.B, s.T, 3 * s.C}), s.NH, 0.0f, 0, probs_rounded.data());
    CHECK(same_bits(FVec(out.data, out.data + out.numel()), bf16.out));
    CHECK(same_bits(FVec(out_rounded.data, out_rounded.data + out_rounded.numel()), float32_at_rounded.out));
    // The probabilities come from the float32 scores and lse alone.
    CHECK(same_bits(probs, probs_rounded));
  }
}

TEST_CASE("a planned step with bf16 attention inputs gives the bits of an eager one", "[attention_bf16][planner]") {
  if (!kernels::bf16_matmul_available()) {
    if (test_support::no_skip()) FAIL("oneDNN has no bf16 matmul here, under TAPEGPT_NO_SKIP=1");
    WARN("oneDNN has no bf16 matmul here: the bf16 attention plan is not checked");
    return;
  }
  const Shape s{2, 9, 8, 2};
  const int64_t V = 11, N = s.B * s.T;
  tg::Rng rng(43);
  FVec x = random_floats(N * s.C, rng), w_qkv = random_floats(3 * s.C * s.C, rng, 0.5),
       w_head = random_floats(V * s.C, rng, 0.5);
  testing::SplitWeights split({&w_qkv, &w_head});  // as a bf16 run's store keeps them
  std::vector<int32_t> targets(static_cast<size_t>(N));
  for (int32_t& t : targets) t = static_cast<int32_t>(rng.below(V));

  struct Grads {
    FVec loss, dx, dw_qkv, dw_head;
  };
  // loss = CE(head · attention(w_qkv · x)) in a bf16 run.
  auto gradients = [&](bool planned) {
    Grads g;
    g.dx.assign(x.size(), 0.0f);
    g.dw_qkv.assign(w_qkv.size(), 0.0f);
    g.dw_head.assign(w_head.size(), 0.0f);
    auto loss_of = [&](const OpContext& ctx) {
      Tensor xv = autograd::tensor_view(x.data(), g.dx.data(), {s.B, s.T, s.C});
      const Tensor wq = split.view(0, g.dw_qkv.data(), {3 * s.C, s.C});
      const Tensor wh = split.view(1, g.dw_head.data(), {V, s.C});
      Tensor h = autograd::linear(ctx, xv, wq, Tensor{});
      h = autograd::attention(ctx, h, s.NH, 0.2f, 77);
      return autograd::cross_entropy(ctx, autograd::linear(ctx, h, wh, Tensor{}), targets.data());
    };
    autograd::Arena arena;
    autograd::Tape tape;
    autograd::MemoryPlan plan;
    FVec block;
    if (planned) {
      tape.begin_planning();
      loss_of(OpContext(&arena, &tape, split.bf16_run()));
      plan = autograd::plan_memory(tape);
      block.assign(static_cast<size_t>(plan.total_floats), std::nanf(""));  // unwritten floats poison
      tape.clear();
      tape.use_plan(plan, block.data());
      CHECK(testing::clashing_buffer_pairs(tape, plan) == 0);
    }
    const Tensor loss = loss_of(OpContext(&arena, &tape, split.bf16_run()));
    tape.backward(loss);
    CHECK(std::string(tape.op_name(1)) == "attention_bf16");
    g.loss = {loss.data[0]};
    return g;
  };
  const Grads eager = gradients(false), planned = gradients(true);
  CHECK(same_bits(eager.loss, planned.loss));
  CHECK(same_bits(eager.dx, planned.dx));
  CHECK(same_bits(eager.dw_qkv, planned.dw_qkv));
  CHECK(same_bits(eager.dw_head, planned.dw_head));
  CHECK(std::any_of(eager.dx.begin(), eager.dx.end(), [](float v) { return v != 0.0f; }));
}
