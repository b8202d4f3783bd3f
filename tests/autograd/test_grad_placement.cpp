// Note [Gradient liveness]: gradients placed in shared buffers, and the
// logits' gradient placed over the logits, give the bits that gradients of
// their own give; and a shared buffer is all zero again after backward.
// Note [Scratch activations]: so do outputs whose data lies in scratch
// storage that is overwritten after the forward (GELU and LayerNorm outputs
// recomputed for backward, a linear output only an add reads).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "autograd/ops.h"
#include "support/gradcheck.h"

using autograd::GradPlacement;
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

bool all_zero(const float* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (p[i] != 0.0f) return false;
  return true;
}

}  // namespace

TEST_CASE("placed gradients give the bits of gradients of their own", "[tape][placement]") {
  const int64_t N = 6, C = 4, H = 8, V = 5;
  tg::Rng rng(11);
  auto leaf = [&](int64_t n) {
    return Leaf{testing::to_float(testing::random_vector<double>(n, rng)), {}};
  };
  Leaf x = leaf(N * C), ln_w = leaf(C), w1 = leaf(H * C), b1 = leaf(H), w2 = leaf(C * H),
       head = leaf(V * C);
  std::vector<int32_t> targets(N);
  for (int32_t& t : targets) t = static_cast<int32_t>(rng.below(V));

  // y = x + linear(gelu(linear(layernorm(x)))), loss = CE(linear(layernorm(y))),
  // the gradients placed as nn::gpt_forward places them (Note [GPT gradient
  // buffers] in nn/gpt.cpp).
  auto gradients = [&](bool placed) {
    autograd::Arena arena;
    autograd::Tape tape;
    const OpContext ctx(&arena, &tape);
    float* residual = arena.alloc_zeroed(N * C);
    float* branch[2] = {arena.alloc_zeroed(N * H), arena.alloc_zeroed(N * H)};
    float* scratch[2] = {arena.alloc(N * H), arena.alloc(N * C)};
    auto in = [&](float* buffer) {
      return placed ? ctx.with_grad(GradPlacement::shared(buffer)) : ctx;
    };
    const Tensor xv = x.view({N, C}), lw = ln_w.view({C}), w1v = w1.view({H, C}),
                 b1v = b1.view({H}), w2v = w2.view({C, H}), hv = head.view({V, C});
    Tensor h = autograd::layernorm(in(branch[0]), xv, lw, Tensor{});
    const Tensor up = autograd::linear(in(branch[1]), h, w1v, b1v);
    auto scratch_of = [&](int i) { return placed ? scratch[i] : nullptr; };
    const Tensor act = autograd::gelu(in(branch[0]).with_data(scratch_of(0)), up);
    h = autograd::linear(in(branch[1]).with_data(scratch_of(1)), act, w2v, Tensor{});
    autograd::gelu_recompute(ctx, act, up);
    const Tensor y = autograd::add(in(residual), xv, h);
    // The branch is done with: its first buffer takes a new tensor.
    Tensor z = autograd::layernorm(in(branch[0]).with_data(scratch_of(1)), y, lw, Tensor{});
    Tensor logits = autograd::linear(placed ? ctx.with_grad(GradPlacement::over_data()) : ctx, z,
                                     hv, Tensor{});
    autograd::layernorm_recompute(ctx, z, y, lw, Tensor{});
    if (placed) {  // the scratch outputs are dead: other outputs may take their storage
      std::fill(scratch[0], scratch[0] + N * H, std::nanf(""));
      std::fill(scratch[1], scratch[1] + N * C, std::nanf(""));
    }
    CHECK((logits.grad == logits.data) == placed);
    const Tensor loss = autograd::cross_entropy(ctx, std::move(logits), targets.data());
    tape.backward(loss, arena);
    if (placed) {
      CHECK(all_zero(residual, N * C));
      CHECK(all_zero(branch[0], N * H));
      CHECK(all_zero(branch[1], N * H));
    }
    return std::vector<std::vector<float>>{x.grad, ln_w.grad, w1.grad, b1.grad, w2.grad, head.grad};
  };
  const auto own = gradients(false), placed = gradients(true);
  REQUIRE(own.size() == placed.size());
  for (size_t i = 0; i < own.size(); ++i) {
    INFO("leaf " << i);
    CHECK(!all_zero(own[i].data(), static_cast<int64_t>(own[i].size())));
    CHECK(std::memcmp(own[i].data(), placed[i].data(), own[i].size() * sizeof(float)) == 0);
  }
}
