// Finite-difference checks, in double precision, of every reference backward
// kernel: the math of each derivative is right before any fast kernel is
// compared against it.
#include <catch2/catch.hpp>

#include "autograd/kernels/reference.h"
#include "support/gradcheck.h"

namespace ref = kernels::reference;
using testing::dot;
using testing::gradcheck;
using testing::random_vector;
using Vec = std::vector<double>;

namespace {

// h = 1e-6 in double: truncation error ~h²·f''' ≈ 1e-12 and rounding error
// ~1e-16·|loss|/h ≈ 1e-9 (more where the loss sums many terms), so a correct
// derivative agrees to ~1e-8…1e-6 (1.1e-6 seen for GELU in unoptimised
// builds); 1e-5 leaves room, while a wrong term shows as 1e-1 or worse.
constexpr double kH = 1e-6;
constexpr double kTol = 1e-5;

testing::GradcheckStats& stats() {
  static testing::GradcheckStats s;
  return s;
}

void check(Vec& x, const Vec& analytic, const std::function<double()>& loss, tg::Rng& rng) {
  CHECK(gradcheck(x, analytic, loss, kH, 1e-3, 64, rng, &stats()) < kTol);
}

}  // namespace

TEST_CASE("reference linear backward matches finite differences", "[gradcheck][reference]") {
  tg::Rng rng(1);
  const int64_t N = 3, IC = 4, OC = 5;
  Vec x = random_vector<double>(N * IC, rng), w = random_vector<double>(OC * IC, rng),
      b = random_vector<double>(OC, rng), r = random_vector<double>(N * OC, rng);
  Vec out(N * OC);
  auto loss = [&] { ref::linear_forward(out.data(), x.data(), w.data(), b.data(), N, IC, OC); return dot(out, r); };
  Vec dx(N * IC), dw(OC * IC), db(OC);
  ref::linear_backward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(), N, IC, OC);
  check(x, dx, loss, rng);
  check(w, dw, loss, rng);
  check(b, db, loss, rng);
}

TEST_CASE("reference embedding backward matches finite differences", "[gradcheck][reference]") {
  tg::Rng rng(2);
  const int64_t B = 2, T = 3, C = 4, V = 5;
  std::vector<int32_t> ids = {1, 4, 1, 0, 1, 4};  // repeats: scatter-add must sum them
  Vec wte = random_vector<double>(V * C, rng), wpe = random_vector<double>(T * C, rng),
      r = random_vector<double>(B * T * C, rng), out(B * T * C);
  auto loss = [&] { ref::embedding_forward(out.data(), ids.data(), wte.data(), wpe.data(), B, T, C); return dot(out, r); };
  Vec dwte(V * C), dwpe(T * C);
  ref::embedding_backward(dwte.data(), dwpe.data(), r.data(), ids.data(), B, T, C);
  check(wte, dwte, loss, rng);
  check(wpe, dwpe, loss, rng);
}

TEST_CASE("reference layernorm backward matches finite differences", "[gradcheck][reference]") {
  tg::Rng rng(3);
  const int64_t N = 3, C = 6;
  Vec x = random_vector<double>(N * C, rng), w = random_vector<double>(C, rng),
      b = random_vector<double>(C, rng), r = random_vector<double>(N * C, rng);
  Vec out(N * C), mean(N), rstd(N);
  auto loss = [&] { ref::layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C); return dot(out, r); };
  loss();
  Vec dx(N * C), dw(C), db(C);
  ref::layernorm_backward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(), mean.data(), rstd.data(), N, C);
  check(x, dx, loss, rng);
  check(w, dw, loss, rng);
  check(b, db, loss, rng);
}

TEST_CASE("reference gelu backward matches finite differences", "[gradcheck][reference]") {
  for (kernels::GeluKind kind : {kernels::GeluKind::Tanh, kernels::GeluKind::Erf}) {
    tg::Rng rng(4);
    const int64_t n = 40;
    Vec x = random_vector<double>(n, rng, 2.0), r = random_vector<double>(n, rng), out(n);
    auto loss = [&] { ref::gelu_forward(out.data(), x.data(), n, kind); return dot(out, r); };
    Vec dx(n);
    ref::gelu_backward(dx.data(), r.data(), x.data(), n, kind);
    check(x, dx, loss, rng);
  }
}

TEST_CASE("reference attention backward with dropout matches finite differences", "[gradcheck][reference]") {
  // A fixed seed fixes the mask, so the function is smooth in qkv.
  tg::Rng rng(7);
  const int64_t B = 2, T = 5, C = 8, NH = 2;
  const double p = 0.3;
  Vec qkv = random_vector<double>(B * T * 3 * C, rng), r = random_vector<double>(B * T * C, rng);
  Vec out(B * T * C), att(B * NH * T * T);
  auto loss = [&] { ref::attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH, p, 5); return dot(out, r); };
  loss();
  Vec dqkv(qkv.size());
  ref::attention_backward(dqkv.data(), r.data(), qkv.data(), att.data(), B, T, C, NH, p, 5);
  check(qkv, dqkv, loss, rng);
}

TEST_CASE("reference attention backward matches finite differences", "[gradcheck][reference]") {
  tg::Rng rng(5);
  const int64_t B = 2, T = 4, C = 8, NH = 2;
  Vec qkv = random_vector<double>(B * T * 3 * C, rng), r = random_vector<double>(B * T * C, rng);
  Vec out(B * T * C), att(B * NH * T * T);
  auto loss = [&] { ref::attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH); return dot(out, r); };
  loss();
  Vec dqkv(qkv.size());
  ref::attention_backward(dqkv.data(), r.data(), qkv.data(), att.data(), B, T, C, NH);
  check(qkv, dqkv, loss, rng);
}

TEST_CASE("reference cross-entropy backward matches finite differences", "[gradcheck][reference]") {
  tg::Rng rng(6);
  const int64_t N = 4, V = 7;
  std::vector<int32_t> targets = {0, 6, 3, 3};
  Vec logits = random_vector<double>(N * V, rng, 2.0), losses(N), probs(N * V);
  auto loss = [&] {
    ref::crossentropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), N, V);
    double s = 0.0;
    for (double l : losses) s += l;
    return s / N;  // the mean, as training uses it
  };
  loss();
  Vec dlogits(N * V);
  ref::crossentropy_backward(dlogits.data(), probs.data(), targets.data(), 1.0 / N, N, V);
  check(logits, dlogits, loss, rng);
  std::printf("gradcheck(reference kernels, double, h=1e-6): worst relative error %.3g over %lld checks\n",
              stats().worst, static_cast<long long>(stats().checks));
}
