// Finite-difference checks of every op through the tape, in float32 as
// training runs it: the forward is recorded, d(Σ out·r)/d out = r is seeded,
// and the reverse replay must give the gradient of every input. One section
// per op, tagged with its name: autograd/ops/<name>.cpp is the op, and
// `test_autograd "[<name>]"` runs its check.
//
// Tolerance: with h = 1e-2 the truncation error h²·f'''/6 is ~2e-5 and the
// float32 rounding of the double-accumulated projection is ~1e-6/2h = 5e-5,
// so a correct gradient is within ~1e-4 of the central difference (absolute
// for gradients below 1, relative above); 5e-3 leaves a wide margin while a
// wrong or missing term (errors of order 1) fails.
#include <catch2/catch.hpp>

#include <cmath>

#include "autograd/ops.h"
#include "support/gradcheck.h"

using autograd::Arena;
using autograd::OpContext;
using autograd::Tape;
using autograd::Tensor;
using testing::random_vector;
using testing::to_float;
using FVec = std::vector<float>;

namespace {

constexpr double kH = 1e-2;
constexpr double kTol = 5e-3;

struct Leaf {
  FVec data, grad;
  std::vector<int64_t> shape;
  Tensor view() {
    Tensor t;
    t.data = data.data();
    t.grad = grad.data();
    for (int64_t d : shape) t.shape[t.ndim++] = d;
    return t;
  }
};

Leaf make_leaf(std::vector<int64_t> shape, tg::Rng& rng, double scale = 1.0) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  Leaf l;
  l.data = to_float(random_vector<double>(n, rng, scale));
  l.grad.assign(static_cast<size_t>(n), 0.0f);
  l.shape = std::move(shape);
  return l;
}

testing::GradcheckStats& stats() {
  static testing::GradcheckStats s;
  return s;
}

// Checks d(Σ f(leaves)·r)/d leaf for every leaf. f builds the graph with ops.
void check_op(std::vector<Leaf*> leaves,
              const std::function<Tensor(OpContext&, std::vector<Tensor>&)>& f, tg::Rng& rng) {
  Arena arena;
  Tape tape;
  auto views = [&] {
    std::vector<Tensor> v;
    for (Leaf* l : leaves) v.push_back(l->view());
    return v;
  };
  // Analytic gradients through the tape, into zeroed leaf gradients.
  for (Leaf* l : leaves) std::fill(l->grad.begin(), l->grad.end(), 0.0f);
  OpContext train{&arena, &tape};
  std::vector<Tensor> in = views();
  Tensor out = f(train, in);
  REQUIRE(out.needs_grad());
  FVec r = to_float(random_vector<double>(out.numel(), rng));
  for (int64_t i = 0; i < out.numel(); ++i) out.grad[i] = r[i];
  tape.replay_backward();
  // Central differences of the same recorded forward (a throwaway tape keeps
  // dropout active, as in training).
  auto loss = [&] {
    Arena a;
    Tape scratch;
    OpContext infer{&a, &scratch};
    std::vector<Tensor> v = views();
    Tensor o = f(infer, v);
    double s = 0.0;
    for (int64_t i = 0; i < o.numel(); ++i) s += double(o.data[i]) * r[i];
    return s;
  };
  for (Leaf* l : leaves) {
    const FVec analytic = l->grad;
    CHECK(testing::gradcheck(l->data, analytic, loss, kH, 1.0, 48, rng, &stats()) < kTol);
  }
}

}  // namespace

TEST_CASE("embedding op gradients", "[gradcheck][ops][embedding]") {
  tg::Rng rng(31);
  Leaf wte = make_leaf({6, 8}, rng), wpe = make_leaf({5, 8}, rng);
  std::vector<int32_t> ids = {0, 3, 3, 5, 1, 3, 0, 2};  // B=2, T=4, repeated ids
  check_op({&wte, &wpe}, [&](OpContext& ctx, std::vector<Tensor>& v) {
    return autograd::embedding(ctx, ids.data(), 2, 4, v[0], v[1]);
  }, rng);
}

TEST_CASE("add op gradients, including one tensor used twice", "[gradcheck][ops][add]") {
  tg::Rng rng(32);
  Leaf a = make_leaf({3, 5}, rng), b = make_leaf({3, 5}, rng);
  check_op({&a, &b}, [](OpContext& ctx, std::vector<Tensor>& v) {
    Tensor s = autograd::add(ctx, v[0], v[1]);
    return autograd::add(ctx, s, v[0]);  // a reaches the output twice
  }, rng);
}

TEST_CASE("linear op gradients, with and without bias", "[gradcheck][ops][linear]") {
  tg::Rng rng(33);
  Leaf x = make_leaf({2, 3, 7}, rng), w = make_leaf({5, 7}, rng, 0.5), b = make_leaf({5}, rng);
  check_op({&x, &w, &b}, [](OpContext& ctx, std::vector<Tensor>& v) {
    return autograd::linear(ctx, v[0], v[1], v[2]);
  }, rng);
  check_op({&x, &w}, [](OpContext& ctx, std::vector<Tensor>& v) {
    return autograd::linear(ctx, v[0], v[1], Tensor{});
  }, rng);
}

TEST_CASE("layernorm op gradients", "[gradcheck][ops][layernorm]") {
  tg::Rng rng(34);
  Leaf x = make_leaf({4, 9}, rng, 2.0), w = make_leaf({9}, rng), b = make_leaf({9}, rng);
  check_op({&x, &w, &b}, [](OpContext& ctx, std::vector<Tensor>& v) {
    return autograd::layernorm(ctx, v[0], v[1], v[2]);
  }, rng);
}

TEST_CASE("gelu op gradients", "[gradcheck][ops][gelu]") {
  tg::Rng rng(35);
  Leaf x = make_leaf({50}, rng, 2.0);
  check_op({&x}, [](OpContext& ctx, std::vector<Tensor>& v) { return autograd::gelu(ctx, v[0]); }, rng);
  check_op({&x}, [](OpContext& ctx, std::vector<Tensor>& v) {
    return autograd::gelu(ctx, v[0], kernels::GeluKind::Erf);
  }, rng);
}

TEST_CASE("rmsnorm op gradients", "[gradcheck][ops][rmsnorm]") {
  tg::Rng rng(40);
  Leaf x = make_leaf({4, 9}, rng, 2.0), w = make_leaf({9}, rng);
  check_op({&x, &w}, [](OpContext& ctx, std::vector<Tensor>& v) {
    return autograd::rmsnorm(ctx, v[0], v[1]);
  }, rng);
}

TEST_CASE("relu2 op gradients", "[gradcheck][ops][relu2]") {
  tg::Rng rng(41);
  Leaf x = make_leaf({50}, rng, 2.0);
  // Away from the kink at 0, where the central difference straddles it.
  for (float& v : x.data)
    if (std::abs(v) < 0.05f) v = v < 0 ? -0.05f : 0.05f;
  check_op({&x}, [](OpContext& ctx, std::vector<Tensor>& v) { return autograd::relu2(ctx, v[0]); }, rng);
}

TEST_CASE("swiglu op gradients", "[gradcheck][ops][swiglu]") {
  tg::Rng rng(42);
  Leaf x = make_leaf({3, 2 * 7}, rng, 2.0);
  check_op({&x}, [](OpContext& ctx, std::vector<Tensor>& v) { return autograd::swiglu(ctx, v[0]); }, rng);
}

TEST_CASE("rope op gradients, from position 0 and later", "[gradcheck][ops][rope]") {
  tg::Rng rng(43);
  Leaf qkv = make_leaf({2, 5, 3 * 8}, rng);
  for (int64_t pos0 : {0, 7})
    check_op({&qkv}, [pos0](OpContext& ctx, std::vector<Tensor>& v) {
      return autograd::rope(ctx, v[0], 2, pos0);
    }, rng);
}

TEST_CASE("qk_norm op gradients (q and k per head; v passed through)", "[gradcheck][ops][qk_norm]") {
  tg::Rng rng(44);
  Leaf qkv = make_leaf({2, 5, 3 * 8}, rng);
  for (int64_t n_head : {1, 2, 4})
    check_op({&qkv}, [n_head](OpContext& ctx, std::vector<Tensor>& v) {
      return autograd::qk_norm(ctx, v[0], n_head);
    }, rng);
}

TEST_CASE("softcap op gradients, alone and before the loss", "[gradcheck][ops][softcap]") {
  tg::Rng rng(45);
  Leaf x = make_leaf({2, 3, 7}, rng, 3.0);
  for (float cap : {15.0f, 2.0f})  // |x/2| up to 1.5: well into tanh's bend
    check_op({&x}, [cap](OpContext& ctx, std::vector<Tensor>& v) { return autograd::softcap(ctx, v[0], cap); }, rng);
  // As gpt_forward uses it: the loss overwrites the capped logits with its
  // probabilities (the leaf keeps its values), so the soft-cap's backward
  // must read its input.
  std::vector<int32_t> targets = {0, 6, 2, 2, 1, 4};
  check_op({&x}, [&](OpContext& ctx, std::vector<Tensor>& v) {
    return autograd::cross_entropy(ctx, autograd::softcap(ctx, v[0], 2.0f), targets.data());
  }, rng);
}

// The naive T×T kernels are compared with the blockwise ones directly, with
// and without dropout, in test_attention_flash.cpp.
TEST_CASE("attention op gradients", "[gradcheck][ops][attention]") {
  tg::Rng rng(36);
  Leaf qkv = make_leaf({2, 5, 3 * 8}, rng);
  check_op({&qkv}, [](OpContext& ctx, std::vector<Tensor>& v) {
    return autograd::attention(ctx, v[0], 2);
  }, rng);
}

TEST_CASE("attention op gradients with attention dropout", "[gradcheck][ops][attention]") {
  tg::Rng rng(39);
  Leaf qkv = make_leaf({2, 5, 3 * 8}, rng);
  check_op({&qkv}, [](OpContext& ctx, std::vector<Tensor>& v) {
    return autograd::attention(ctx, v[0], 2, 0.3f, 1234);
  }, rng);
}

TEST_CASE("dropout op gradients (fixed seed, so the mask is fixed)", "[gradcheck][ops][dropout]") {
  tg::Rng rng(37);
  Leaf x = make_leaf({64}, rng);
  check_op({&x}, [](OpContext& ctx, std::vector<Tensor>& v) {
    return autograd::dropout(ctx, v[0], 0.25f, 99);
  }, rng);
}

TEST_CASE("cross-entropy op gradients (the mean loss)", "[gradcheck][ops][cross_entropy]") {
  tg::Rng rng(38);
  Leaf logits = make_leaf({2, 3, 6}, rng, 2.0);
  std::vector<int32_t> targets = {0, 5, 2, 2, 1, 4};
  check_op({&logits}, [&](OpContext& ctx, std::vector<Tensor>& v) {
    // The op takes its logits over (they receive the probabilities): give it
    // a copy, logits + 0, so the leaf keeps its values.
    Tensor copy = autograd::add(ctx, v[0], autograd::tensor_view(ctx.arena->alloc_zeroed(v[0].numel()), nullptr, {v[0].numel()}));
    return autograd::cross_entropy(ctx, std::move(copy), targets.data());
  }, rng);
  std::printf("gradcheck(ops through the tape, float32, h=1e-2): worst error %.3g over %lld checks\n",
              stats().worst, static_cast<long long>(stats().checks));
}
