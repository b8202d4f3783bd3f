// The fast float kernels against the naive double reference: forward outputs
// and accumulated gradients. Gradient buffers start non-zero to check that
// backward kernels ADD (Note [Kernel conventions]).
#include <catch2/catch.hpp>

#include "autograd/kernels/fast_math.h"
#include "autograd/kernels/kernels.h"
#include "autograd/kernels/reference.h"
#include "support/gradcheck.h"

namespace ref = kernels::reference;
using testing::random_vector;
using testing::to_float;
using Vec = std::vector<double>;
using FVec = std::vector<float>;

namespace {

// float32 kernels accumulate sums of up to a few hundred terms: a relative
// error of ~1e-6·√terms is expected, so 2e-4 of the largest value is ample.
void require_close(const FVec& got, const Vec& want, double tol = 2e-4) {
  REQUIRE(got.size() == want.size());
  const double scale = std::max(1.0, testing::max_abs(want));
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
  INFO("worst abs diff " << worst << " scale " << scale);
  CHECK(worst <= tol * scale);
}

}  // namespace

TEST_CASE("linear kernels match the reference", "[kernels]") {
  tg::Rng rng(11);
  const int64_t IC = 96, OC = 80;
  for (int64_t N : {1, 37})  // one row takes the sgemv path
  for (bool with_bias : {true, false}) {
    Vec x = random_vector<double>(N * IC, rng), w = random_vector<double>(OC * IC, rng, 0.1),
        b = random_vector<double>(OC, rng), dout = random_vector<double>(N * OC, rng);
    Vec out(N * OC);
    ref::linear_forward(out.data(), x.data(), w.data(), with_bias ? b.data() : nullptr, N, IC, OC);
    FVec fx = to_float(x), fw = to_float(w), fb = to_float(b), fout(N * OC);
    kernels::linear_forward(fout.data(), fx.data(), fw.data(), with_bias ? fb.data() : nullptr, N, IC, OC);
    require_close(fout, out);

    Vec dx = random_vector<double>(N * IC, rng), dw = random_vector<double>(OC * IC, rng),
        db = random_vector<double>(OC, rng);
    FVec fdx = to_float(dx), fdw = to_float(dw), fdb = to_float(db), fdout = to_float(dout);
    ref::linear_backward(dx.data(), dw.data(), db.data(), dout.data(), x.data(), w.data(), N, IC, OC);
    kernels::linear_backward(fdx.data(), fdw.data(), fdb.data(), fdout.data(), fx.data(), fw.data(), N, IC, OC);
    require_close(fdx, dx);
    require_close(fdw, dw);
    require_close(fdb, db);
  }
}

TEST_CASE("embedding kernels match the reference", "[kernels]") {
  tg::Rng rng(12);
  const int64_t B = 3, T = 9, C = 130, V = 7;
  std::vector<int32_t> ids(B * T);
  for (auto& id : ids) id = static_cast<int32_t>(rng.below(V));
  Vec wte = random_vector<double>(V * C, rng), wpe = random_vector<double>(T * C, rng),
      dout = random_vector<double>(B * T * C, rng), out(B * T * C);
  ref::embedding_forward(out.data(), ids.data(), wte.data(), wpe.data(), B, T, C);
  FVec fwte = to_float(wte), fwpe = to_float(wpe), fout(B * T * C);
  kernels::embedding_forward(fout.data(), ids.data(), fwte.data(), fwpe.data(), B, T, C);
  require_close(fout, out);
  Vec dwte = random_vector<double>(V * C, rng), dwpe = random_vector<double>(T * C, rng);
  FVec fdwte = to_float(dwte), fdwpe = to_float(dwpe), fdout = to_float(dout);
  ref::embedding_backward(dwte.data(), dwpe.data(), dout.data(), ids.data(), B, T, C);
  kernels::embedding_backward(fdwte.data(), fdwpe.data(), fdout.data(), ids.data(), B, T, C);
  require_close(fdwte, dwte);
  require_close(fdwpe, dwpe);
}

TEST_CASE("layernorm kernels match the reference", "[kernels]") {
  tg::Rng rng(13);
  const int64_t N = 29, C = 200;
  Vec x = random_vector<double>(N * C, rng, 3.0), w = random_vector<double>(C, rng),
      b = random_vector<double>(C, rng), dout = random_vector<double>(N * C, rng);
  for (int64_t i = 0; i < N * C; ++i) x[i] += 5.0;  // an offset the mean must remove
  Vec out(N * C), mean(N), rstd(N);
  ref::layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
  FVec fx = to_float(x), fw = to_float(w), fb = to_float(b), fout(N * C), fmean(N), frstd(N);
  kernels::layernorm_forward(fout.data(), fmean.data(), frstd.data(), fx.data(), fw.data(), fb.data(), N, C);
  require_close(fout, out);
  Vec dx = random_vector<double>(N * C, rng), dw = random_vector<double>(C, rng), db = random_vector<double>(C, rng);
  FVec fdx = to_float(dx), fdw = to_float(dw), fdb = to_float(db), fdout = to_float(dout);
  ref::layernorm_backward(dx.data(), dw.data(), db.data(), dout.data(), x.data(), w.data(), mean.data(), rstd.data(), N, C);
  kernels::layernorm_backward(fdx.data(), fdw.data(), fdb.data(), fdout.data(), fx.data(), fw.data(), fmean.data(), frstd.data(), N, C);
  require_close(fdx, dx);
  require_close(fdw, dw);
  require_close(fdb, db);
}

TEST_CASE("gelu kernels match the reference", "[kernels]") {
  tg::Rng rng(14);
  const int64_t n = 5000;
  Vec x = random_vector<double>(n, rng, 3.0), dout = random_vector<double>(n, rng), out(n);
  ref::gelu_forward(out.data(), x.data(), n);
  FVec fx = to_float(x), fout(n);
  kernels::gelu_forward(fout.data(), fx.data(), n);
  require_close(fout, out);
  Vec dx = random_vector<double>(n, rng);
  FVec fdx = to_float(dx), fdout = to_float(dout);
  ref::gelu_backward(dx.data(), dout.data(), x.data(), n);
  kernels::gelu_backward(fdx.data(), fdout.data(), fx.data(), n);
  require_close(fdx, dx);
}

TEST_CASE("attention kernels match the reference", "[kernels]") {
  tg::Rng rng(15);
  const int64_t B = 2, T = 13, C = 48, NH = 3;
  Vec qkv = random_vector<double>(B * T * 3 * C, rng), dout = random_vector<double>(B * T * C, rng);
  Vec out(B * T * C), att(B * NH * T * T);
  ref::attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
  FVec fqkv = to_float(qkv), fout(B * T * C), fatt(B * NH * T * T), scratch(B * NH * T * T);
  kernels::attention_forward(fout.data(), fatt.data(), fqkv.data(), B, T, C, NH);
  require_close(fout, out);
  require_close(fatt, att);
  Vec dqkv = random_vector<double>(qkv.size(), rng);
  FVec fdqkv = to_float(dqkv), fdout = to_float(dout);
  ref::attention_backward(dqkv.data(), dout.data(), qkv.data(), att.data(), B, T, C, NH);
  kernels::attention_backward(fdqkv.data(), scratch.data(), fdout.data(), fqkv.data(), fatt.data(), B, T, C, NH);
  require_close(fdqkv, dqkv);
}

TEST_CASE("attention_decode matches the last row of full attention", "[kernels]") {
  tg::Rng rng(16);
  const int64_t T = 11, C = 24, NH = 4;
  FVec qkv = to_float(random_vector<double>(T * 3 * C, rng));
  FVec out(T * C), att(NH * T * T);
  kernels::attention_forward(out.data(), att.data(), qkv.data(), 1, T, C, NH);
  // Caches hold the k and v rows of every position, as the decoder keeps them.
  FVec kc(T * C), vc(T * C), dec(C), scratch(NH * T);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < C; ++c) {
      kc[t * C + c] = qkv[t * 3 * C + C + c];
      vc[t * C + c] = qkv[t * 3 * C + 2 * C + c];
    }
  for (int64_t t = 0; t < T; ++t) {
    kernels::attention_decode(dec.data(), scratch.data(), qkv.data() + t * 3 * C, kc.data(), vc.data(), t + 1, C, NH);
    for (int64_t c = 0; c < C; ++c) CHECK(dec[c] == Approx(out[t * C + c]).margin(1e-5));
  }
}

TEST_CASE("cross-entropy kernels match the reference, in place too", "[kernels]") {
  tg::Rng rng(17);
  const int64_t N = 21, V = 300;
  Vec logits = random_vector<double>(N * V, rng, 4.0), losses(N), probs(N * V);
  std::vector<int32_t> targets(N);
  for (auto& t : targets) t = static_cast<int32_t>(rng.below(V));
  ref::crossentropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), N, V);
  FVec flogits = to_float(logits), flosses(N);
  kernels::crossentropy_forward(flosses.data(), flogits.data(), flogits.data(), targets.data(), N, V);
  require_close(flosses, losses);
  require_close(flogits, probs);  // probabilities overwrote the logits
  Vec dlogits = random_vector<double>(N * V, rng);
  FVec fdlogits = to_float(dlogits);
  ref::crossentropy_backward(dlogits.data(), probs.data(), targets.data(), 0.25, N, V);
  kernels::crossentropy_backward(fdlogits.data(), flogits.data(), targets.data(), 0.25f, N, V);
  require_close(fdlogits, dlogits);
}

TEST_CASE("adamw_update matches the PyTorch formula and zeroes the gradient", "[kernels]") {
  tg::Rng rng(18);
  const int64_t n = 1000;
  FVec p = to_float(random_vector<double>(n, rng)), m = to_float(random_vector<double>(n, rng, 0.1));
  FVec v(n), g = to_float(random_vector<double>(n, rng));
  for (auto& x : v) x = static_cast<float>(rng.uniform());
  const FVec p0 = p, m0 = m, v0 = v, g0 = g;
  const float lr = 1e-3f, b1 = 0.9f, b2 = 0.95f, eps = 1e-8f, wd = 0.1f, scale = 0.5f;
  const int64_t step = 3;
  kernels::adamw_update(p.data(), m.data(), v.data(), g.data(), n, lr, b1, b2, eps, wd, step, scale);
  for (int64_t i = 0; i < n; ++i) {
    const double gi = double(g0[i]) * scale;
    const double mi = b1 * double(m0[i]) + (1 - b1) * gi;
    const double vi = b2 * double(v0[i]) + (1 - b2) * gi * gi;
    const double mhat = mi / (1 - std::pow(double(b1), step)), vhat = vi / (1 - std::pow(double(b2), step));
    const double pi = double(p0[i]) * (1 - double(lr) * wd) - lr * mhat / (std::sqrt(vhat) + eps);
    CHECK(p[i] == Approx(pi).epsilon(1e-5).margin(1e-6));
    CHECK(m[i] == Approx(mi).epsilon(1e-5).margin(1e-7));
    CHECK(v[i] == Approx(vi).epsilon(1e-5).margin(1e-7));
    CHECK(g[i] == 0.0f);
  }
}

TEST_CASE("sum_squares is exact enough and independent of chunking", "[kernels]") {
  tg::Rng rng(19);
  for (int64_t n : {1, 1000, 100000, 5000000}) {
    FVec x = to_float(random_vector<double>(n, rng));
    double want = 0.0;
    for (float v : x) want += double(v) * v;
    CHECK(kernels::sum_squares(x.data(), n) == Approx(want).epsilon(1e-12));
  }
}

TEST_CASE("dropout keeps about 1-p, scales by 1/(1-p), and backward uses the same mask", "[kernels]") {
  const int64_t n = 100000;
  const float p = 0.3f;
  FVec x(n, 1.0f), out(n), dx(n, 0.0f), dout(n, 1.0f);
  kernels::dropout_forward(out.data(), x.data(), p, 42, n);
  kernels::dropout_backward(dx.data(), dout.data(), p, 42, n);
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    REQUIRE(dx[i] == out[i]);  // same mask, same scale
    if (out[i] != 0.0f) {
      ++kept;
      REQUIRE(out[i] == Approx(1.0f / (1.0f - p)));
    }
  }
  CHECK(double(kept) / n == Approx(0.7).margin(0.01));
}

TEST_CASE("fast_tanh is within 5e-7 of tanh everywhere", "[kernels]") {
  double worst = 0.0;
  for (double x = -20.0; x <= 20.0; x += 1.0 / 4096) {
    const float xf = static_cast<float>(x);
    worst = std::max(worst, std::fabs(kernels::fast_tanh(xf) - std::tanh(static_cast<double>(xf))));
  }
  for (float tiny : {0.0f, 1e-30f, -3e-4f, 3.9e-4f}) CHECK(kernels::fast_tanh(tiny) == tiny);
  CHECK(worst < 5e-7);
}
