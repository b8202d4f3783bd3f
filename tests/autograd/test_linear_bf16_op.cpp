// The bf16 linear op (Note [bf16 linear] in autograd/ops/linear.cpp): its
// output and gradients are exactly the bf16 kernels' (checked against a
// double reference in test_bf16.cpp) on x, the weight's own bf16 copy (the
// high plane of its split master, found through the run's precision in the
// op's context) and dout each rounded once; the bias gradient is the float32 sum of dout; and
// all of them lie within bf16's rounding of the float32 op's. Also the
// in-place rounding that gives dout its bf16 copy.
#include <catch2/catch.hpp>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "autograd/kernels/bf16.h"
#include "autograd/ops.h"
#include "support/gradcheck.h"
#include "support/no_skip.h"
#include "support/split_weights.h"

using autograd::Tensor;
using FVec = std::vector<float>;
using BVec = std::vector<uint16_t>;

namespace {

bool bf16_here() {
  if (kernels::bf16_matmul_available()) return true;
  if (test_support::no_skip()) FAIL("oneDNN has no bf16 matmul here, under TAPEGPT_NO_SKIP=1");
  WARN("oneDNN has no bf16 matmul here: the bf16 op is not checked");
  return false;
}

BVec rounded(const FVec& x) {
  BVec b(x.size());
  kernels::round_to_bf16(b.data(), x.data(), static_cast<int64_t>(x.size()));
  return b;
}

FVec random_floats(int64_t n, tg::Rng& rng, double scale = 1.0) {
  return testing::to_float(testing::random_vector<double>(n, rng, scale));
}

bool same_bits(const FVec& a, const FVec& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// |got - want| ≤ 2^-7 · Σ|a·b| + 1e-6 elementwise: each product of two
// operands rounded to bf16 (unit roundoff 2^-8) is off by at most about
// 2·2^-8 of its size; float32 sums add far less.
void check_within_bf16(const FVec& got, const FVec& want, const FVec& abs_sum, const char* what) {
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::fabs(double(got[i]) - want[i]) > 0x1p-7 * 1.02 * abs_sum[i] + 1e-6) ++bad;
  INFO(what << ": " << bad << " of " << got.size() << " outside bf16's bound");
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("round_to_bf16_in_place gives round_to_bf16's bits at every size and thread count", "[bf16][linear_bf16]") {
  tg::Rng rng(7);
  const int restore = omp_get_max_threads();
  for (const int64_t n : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{65535}, int64_t{65536}, int64_t{65537},
                          int64_t{3 * 65536 + 5}, int64_t{9 * 65536 + 1}})
    for (const int threads : {1, 3}) {
      INFO("n " << n << ", " << threads << " threads");
      omp_set_num_threads(threads);
      FVec f = random_floats(n, rng, 3.0);
      const BVec want = rounded(f);
      const uint16_t* got = kernels::round_to_bf16_in_place(f.data(), n);
      CHECK(static_cast<const void*>(got) == static_cast<const void*>(f.data()));
      CHECK((n == 0 || std::memcmp(got, want.data(), static_cast<size_t>(n) * sizeof(uint16_t)) == 0));
    }
  omp_set_num_threads(restore);
}

TEST_CASE("the bf16 linear op: the kernels on once-rounded operands, float32 bias gradient", "[linear_bf16]") {
  if (!bf16_here()) return;
  // Wider input than output, and not: a planned step puts x's backward copy
  // in scratch of its own in the first, in dout's freed second half in the
  // others (Note [bf16 linear]; test_planner.cpp checks that placement). Here
  // the tape is eager, so the copy has floats of its own: the op must give
  // the same bits either way.
  const auto widths = GENERATE(std::make_pair<int64_t, int64_t>(97, 83), std::make_pair<int64_t, int64_t>(83, 97),
                               std::make_pair<int64_t, int64_t>(64, 64));
  const int64_t N = 37, IC = widths.first, OC = widths.second;
  INFO("IC " << IC << ", OC " << OC);
  tg::Rng rng(21);
  const FVec x = random_floats(N * IC, rng), w = random_floats(OC * IC, rng, 0.5), b = random_floats(OC, rng),
             r = random_floats(N * OC, rng);
  const BVec wb = rounded(w), xb = rounded(x), rb = rounded(r);
  for (const bool weight_grad : {true, false}) {
    INFO((weight_grad ? "every gradient" : "no weight gradient"));
    FVec xd = x, bd = b, dx(N * IC, 0.0f), dw(OC * IC, 0.0f), db(OC, 0.0f);
    testing::SplitWeights split({&w});  // as a bf16 run's store keeps the weight
    Tensor xv = autograd::tensor_view(xd.data(), dx.data(), {N, IC});
    const Tensor wv = split.view(0, weight_grad ? dw.data() : nullptr, {OC, IC});
    const Tensor bv = autograd::tensor_view(bd.data(), db.data(), {OC});
    autograd::Arena arena;
    autograd::Tape tape;
    const Tensor out = autograd::linear(autograd::OpContext(&arena, &tape, split.bf16_run()), xv, wv, bv);
    REQUIRE(std::strcmp(tape.op_name(0), "linear_bf16") == 0);
    std::copy(r.begin(), r.end(), out.grad);
    tape.replay_backward();

    FVec want_out(N * OC), want_dx(N * IC, 0.0f), want_dw(OC * IC, 0.0f), want_db(OC, 0.0f);
    kernels::linear_forward_bf16(want_out.data(), xb.data(), wb.data(), b.data(), N, IC, OC);
    kernels::linear_backward_bf16(want_dx.data(), weight_grad ? want_dw.data() : nullptr, rb.data(), xb.data(),
                                  wb.data(), N, IC, OC);
    kernels::linear_backward(nullptr, nullptr, want_db.data(), r.data(), nullptr, nullptr, N, IC, OC);
    CHECK(same_bits(FVec(out.data, out.data + N * OC), want_out));
    CHECK(same_bits(dx, want_dx));
    CHECK(same_bits(dw, want_dw));  // all zero without a weight gradient
    CHECK(same_bits(db, want_db));
    CHECK(same_bits(xd, x));  // x itself is not rounded
  }

  // Within bf16's rounding of the float32 op's results.
  FVec xd = x, bd = b, dx(N * IC, 0.0f), dw(OC * IC, 0.0f), db(OC, 0.0f);
  testing::SplitWeights split({&w});
  const Tensor wv = split.view(0, dw.data(), {OC, IC});
  autograd::Arena arena;
  autograd::Tape tape;
  const Tensor out = autograd::linear(autograd::OpContext(&arena, &tape, split.bf16_run()),
                                      autograd::tensor_view(xd.data(), dx.data(), {N, IC}), wv,
                                      autograd::tensor_view(bd.data(), db.data(), {OC}));
  std::copy(r.begin(), r.end(), out.grad);
  tape.replay_backward();
  FVec f_out(N * OC), f_dx(N * IC, 0.0f), f_dw(OC * IC, 0.0f), f_db(OC, 0.0f);
  kernels::linear_forward(f_out.data(), x.data(), w.data(), b.data(), N, IC, OC);
  kernels::linear_backward(f_dx.data(), f_dw.data(), f_db.data(), r.data(), x.data(), w.data(), N, IC, OC);
  FVec s_out(N * OC, 0.0f), s_dx(N * IC, 0.0f), s_dw(OC * IC, 0.0f);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < OC; ++o)
      for (int64_t i = 0; i < IC; ++i) {
        s_out[n * OC + o] += std::fabs(x[n * IC + i] * w[o * IC + i]);
        s_dx[n * IC + i] += std::fabs(r[n * OC + o] * w[o * IC + i]);
        s_dw[o * IC + i] += std::fabs(r[n * OC + o] * x[n * IC + i]);
      }
  check_within_bf16(FVec(out.data, out.data + N * OC), f_out, s_out, "out");
  check_within_bf16(dx, f_dx, s_dx, "dx");
  check_within_bf16(dw, f_dw, s_dw, "dweight");
  CHECK(same_bits(db, f_db));
}
