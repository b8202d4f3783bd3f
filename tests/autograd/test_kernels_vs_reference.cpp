// The fast float kernels against the naive double reference: forward outputs
// and accumulated gradients. Gradient buffers start non-zero to check that
// backward kernels ADD (Note [Kernel conventions]).
//
// Note [Tolerances from float32 rounding]
// Every element is checked on its own: |got - want| ≤ k·u·scale, with
// u = 2⁻²⁴ float32's unit roundoff, scale the magnitude of what produced that
// element (Σ|terms| for a sum of products — Higham's a-priori bound
// γ_k·Σ|a·b| — times the condition number of any exp, tanh or erf applied),
// and k the number of roundings on the longest path (the length of the sum
// plus a few). The bounds are worst cases, so they cannot fail by bad luck,
// yet relative per element: a wrong formula that moves an element by more
// than a few ulps of its own magnitude fails — swapping erf- and tanh-GELU,
// or LayerNorm's eps 1e-5 for 1e-6, fails by orders of magnitude (the
// rows with variance near eps make the eps visible).
#include <catch2/catch.hpp>

#include <cmath>

#include "autograd/kernels/attention_flash.h"
#include "autograd/kernels/attention_naive.h"
#include "autograd/kernels/fast_math.h"
#include "autograd/kernels/kernels.h"
#include "autograd/kernels/reference.h"
#include "support/float_bounds.h"
#include "support/gradcheck.h"

namespace ref = kernels::reference;
using testing::to_float;
using Vec = std::vector<double>;
using FVec = std::vector<float>;
using testing::abs_of;
using testing::kU;
using testing::require_within;

TEST_CASE("linear kernels match the reference", "[kernels]") {
  tg::Rng rng(11);
  const int64_t IC = 96, OC = 80;
  for (int64_t N : {1, 37})  // one row takes the sgemv path
  for (bool with_bias : {true, false}) {
    Vec x = testing::float_exact_vector<double>(N * IC, rng), w = testing::float_exact_vector<double>(OC * IC, rng, 0.1),
        b = testing::float_exact_vector<double>(OC, rng), dout = testing::float_exact_vector<double>(N * OC, rng);
    Vec out(N * OC);
    ref::linear_forward(out.data(), x.data(), w.data(), with_bias ? b.data() : nullptr, N, IC, OC);
    FVec fx = to_float(x), fw = to_float(w), fb = to_float(b), fout(N * OC);
    kernels::linear_forward(fout.data(), fx.data(), fw.data(), with_bias ? fb.data() : nullptr, N, IC, OC);
    // The same products on absolute values give Σ|terms| per element.
    const Vec ax = abs_of(x), aw = abs_of(w), ab = abs_of(b), adout = abs_of(dout);
    Vec sout(N * OC);
    ref::linear_forward(sout.data(), ax.data(), aw.data(), with_bias ? ab.data() : nullptr, N, IC, OC);
    require_within(fout, out, sout, IC + 2, "linear out");

    Vec dx = testing::float_exact_vector<double>(N * IC, rng), dw = testing::float_exact_vector<double>(OC * IC, rng),
        db = testing::float_exact_vector<double>(OC, rng);
    Vec sdx = abs_of(dx), sdw = abs_of(dw), sdb = abs_of(db);
    FVec fdx = to_float(dx), fdw = to_float(dw), fdb = to_float(db), fdout = to_float(dout);
    ref::linear_backward(dx.data(), dw.data(), db.data(), dout.data(), x.data(), w.data(), N, IC, OC);
    kernels::linear_backward(fdx.data(), fdw.data(), fdb.data(), fdout.data(), fx.data(), fw.data(), N, IC, OC);
    ref::linear_backward(sdx.data(), sdw.data(), sdb.data(), adout.data(), ax.data(), aw.data(), N, IC, OC);
    require_within(fdx, dx, sdx, OC + 2, "linear dinp");
    require_within(fdw, dw, sdw, N + 2, "linear dweight");
    require_within(fdb, db, sdb, N + 2, "linear dbias");
  }
}

TEST_CASE("embedding kernels match the reference", "[kernels]") {
  tg::Rng rng(12);
  const int64_t B = 3, T = 9, C = 130, V = 7;
  std::vector<int32_t> ids(B * T);
  for (auto& id : ids) id = static_cast<int32_t>(rng.below(V));
  Vec wte = testing::float_exact_vector<double>(V * C, rng), wpe = testing::float_exact_vector<double>(T * C, rng),
      dout = testing::float_exact_vector<double>(B * T * C, rng), out(B * T * C);
  ref::embedding_forward(out.data(), ids.data(), wte.data(), wpe.data(), B, T, C);
  FVec fwte = to_float(wte), fwpe = to_float(wpe), fout(B * T * C);
  kernels::embedding_forward(fout.data(), ids.data(), fwte.data(), fwpe.data(), B, T, C);
  const Vec awte = abs_of(wte), awpe = abs_of(wpe), adout = abs_of(dout);
  Vec sout(B * T * C);
  ref::embedding_forward(sout.data(), ids.data(), awte.data(), awpe.data(), B, T, C);
  require_within(fout, out, sout, 1, "embedding out");  // one addition: one rounding
  Vec dwte = testing::float_exact_vector<double>(V * C, rng), dwpe = testing::float_exact_vector<double>(T * C, rng);
  Vec sdwte = abs_of(dwte), sdwpe = abs_of(dwpe);
  FVec fdwte = to_float(dwte), fdwpe = to_float(dwpe), fdout = to_float(dout);
  ref::embedding_backward(dwte.data(), dwpe.data(), dout.data(), ids.data(), B, T, C);
  kernels::embedding_backward(fdwte.data(), fdwpe.data(), fdout.data(), ids.data(), B, T, C);
  ref::embedding_backward(sdwte.data(), sdwpe.data(), adout.data(), ids.data(), B, T, C);
  require_within(fdwte, dwte, sdwte, B * T + 1, "embedding dwte");
  require_within(fdwpe, dwpe, sdwpe, B + 1, "embedding dwpe");
}

// LayerNorm with the float kernel's own eps against a reference whose eps is
// `ref_eps` (the eps test passes 1e-6 and expects a failure).
void check_layernorm(double ref_eps_scale, bool expect_pass) {
  tg::Rng rng(13);
  const int64_t N = 29, C = 200;
  Vec x = testing::float_exact_vector<double>(N * C, rng, 3.0), w = testing::float_exact_vector<double>(C, rng),
      b = testing::float_exact_vector<double>(C, rng), dout = testing::float_exact_vector<double>(N * C, rng);
  for (int64_t i = 0; i < N * C; ++i) x[i] = static_cast<float>(x[i] + 5.0);  // an offset the mean must remove
  // Rows 0..4 have variance near eps (std 0.003, 0.001, ...), where eps moves
  // the output by tens of percent: a wrong eps cannot hide there.
  for (int64_t n = 0; n < 5; ++n)
    for (int64_t c = 0; c < C; ++c) x[n * C + c] = static_cast<float>(5.0 + (x[n * C + c] - 5.0) * 1e-3 / (n + 1));
  // The reference with eps scaled: x/√a has the variance of x over a, so
  // normalising x/√a with eps/a is normalising x with eps (the test of a
  // wrong eps scales its inputs instead of touching the reference).
  const double a = ref_eps_scale;
  Vec xr(N * C);
  for (int64_t i = 0; i < N * C; ++i) xr[i] = x[i] / std::sqrt(a);
  Vec out(N * C), mean(N), rstd(N);
  ref::layernorm_forward(out.data(), mean.data(), rstd.data(), xr.data(), w.data(), b.data(), N, C);
  FVec fx = to_float(x), fw = to_float(w), fb = to_float(b), fout(N * C), fmean(N), frstd(N);
  kernels::layernorm_forward(fout.data(), fmean.data(), frstd.data(), fx.data(), fw.data(), fb.data(), N, C);
  // Forward: the mean is a C-term sum, so x - m carries up to C·u·(|x| + |m|)
  // of absolute error; scaled by rstd, it reaches the output through x̂·w and,
  // via the variance, through rstd itself (a factor |x̂|).
  Vec sout(N * C);
  for (int64_t n = 0; n < N; ++n) {
    double m = 0.0, v = 0.0;
    for (int64_t c = 0; c < C; ++c) m += x[n * C + c] / C;
    for (int64_t c = 0; c < C; ++c) v += (x[n * C + c] - m) * (x[n * C + c] - m) / C;
    const double r = 1.0 / std::sqrt(v + 1e-5);
    for (int64_t c = 0; c < C; ++c) {
      const double xhat = (x[n * C + c] - m) * r;
      sout[n * C + c] = std::fabs(w[c]) * r * (std::fabs(x[n * C + c]) + std::fabs(m)) *
                            (2.0 + std::fabs(xhat)) + std::fabs(b[c]);
    }
  }
  const double k_fwd = C + 8;
  if (!expect_pass) {
    double worst = 0.0;
    for (int64_t i = 0; i < N * C; ++i)
      worst = std::max(worst, std::fabs(fout[i] - out[i]) / (kU * sout[i]));
    INFO("a wrong eps gives " << worst << " u·scale, bound " << k_fwd);
    CHECK(worst > 10 * k_fwd);
    return;
  }
  require_within(fout, out, sout, k_fwd, "layernorm out");
  Vec dx = testing::float_exact_vector<double>(N * C, rng), dw = testing::float_exact_vector<double>(C, rng), db = testing::float_exact_vector<double>(C, rng);
  FVec fdx = to_float(dx), fdw = to_float(dw), fdb = to_float(db), fdout = to_float(dout);
  // Backward scales: dinp = rstd·(g - mean(g) - x̂·mean(g·x̂)), g = dout·w, each
  // term in absolute value, times the forward's relative error in x̂ and rstd
  // ((|x| + |m|)·rstd); dweight, dbias are N-term sums.
  Vec sdx = abs_of(dx), sdw = abs_of(dw), sdb = abs_of(db);
  for (int64_t n = 0; n < N; ++n) {
    const double r = rstd[n] * std::sqrt(a), m = mean[n] * std::sqrt(a);
    double gm = 0.0, gxm = 0.0, cond = 0.0;
    for (int64_t c = 0; c < C; ++c) {
      const double xhat = (x[n * C + c] - m) * r;
      gm += std::fabs(dout[n * C + c] * w[c]) / C;
      gxm += std::fabs(dout[n * C + c] * w[c] * xhat) / C;
      cond = std::max(cond, (std::fabs(x[n * C + c]) + std::fabs(m)) * r);
    }
    for (int64_t c = 0; c < C; ++c) {
      const double xhat = (x[n * C + c] - m) * r;
      sdx[n * C + c] += r * (std::fabs(dout[n * C + c] * w[c]) + gm + std::fabs(xhat) * gxm) * (1.0 + cond);
      sdw[c] += std::fabs(dout[n * C + c]) * (std::fabs(xhat) + cond);
      sdb[c] += std::fabs(dout[n * C + c]);
    }
  }
  ref::layernorm_backward(dx.data(), dw.data(), db.data(), dout.data(), x.data(), w.data(), mean.data(), rstd.data(), N, C);
  kernels::layernorm_backward(fdx.data(), fdw.data(), fdb.data(), fdout.data(), fx.data(), fw.data(), fmean.data(), frstd.data(), N, C);
  require_within(fdx, dx, sdx, C + 8, "layernorm dinp");
  require_within(fdw, dw, sdw, N + 8, "layernorm dweight");
  require_within(fdb, db, sdb, N + 2, "layernorm dbias");
}

TEST_CASE("layernorm kernels match the reference", "[kernels]") { check_layernorm(1.0, true); }

TEST_CASE("the layernorm bound fails for eps 1e-6 instead of 1e-5", "[kernels]") {
  // Normalising x/√10 with eps 1e-5 is normalising x with eps 1e-6.
  check_layernorm(10.0, false);
}

// Forward and backward scales of GELU at x (Note [Tolerances from float32
// rounding]): the value (or each term of the derivative) times the
// condition number of the exp inside, |argument| + 1.
void gelu_scales(kernels::GeluKind kind, double x, double dout, double* fwd, double* bwd) {
  const double k = std::sqrt(2.0 / M_PI);
  if (kind == kernels::GeluKind::Tanh) {
    const double u = k * (x + 0.044715 * x * x * x), s = 1.0 / (1.0 + std::exp(-2.0 * u));
    const double du = k * (1.0 + 3.0 * 0.044715 * x * x), cond = 1.0 + std::fabs(2.0 * u);
    *fwd = std::fabs(x * s) * cond;
    *bwd = std::fabs(dout) * (s + std::fabs(2.0 * x * du * s * (1.0 - s))) * cond;
  } else {
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI), cond = 1.0 + 0.5 * x * x;
    *fwd = std::fabs(x * cdf) * cond;
    *bwd = std::fabs(dout) * (cdf + std::fabs(x * pdf)) * cond;
  }
}

// About ten roundings (x³, the polynomial, the exp or erfc, 1 + e, the
// division) plus the float rounding of the constants √(2/π), 0.044715, 1/√2
// and the 1.2e-7 (2u) of the erfc fit: 16, times the scales above.
constexpr double kGeluBound = 16;

// The float kernel `kind` against the double formula `ref_kind`: a pass must
// be within kGeluBound; a mismatch of kinds must break that bound widely.
void check_gelu(kernels::GeluKind kind, kernels::GeluKind ref_kind) {
  tg::Rng rng(14);
  const int64_t n = 20000;
  Vec x = testing::float_exact_vector<double>(n, rng, 3.0), dout = testing::float_exact_vector<double>(n, rng), out(n);
  for (int64_t i = 0; i < 200; ++i) x[i] = static_cast<float>(-12.0 + 24.0 * i / 199.0);  // the tails too
  ref::gelu_forward(out.data(), x.data(), n, ref_kind);
  FVec fx = to_float(x), fout(n);
  kernels::gelu_forward(fout.data(), fx.data(), n, kind);
  Vec dx = testing::float_exact_vector<double>(n, rng), sfwd(n), sbwd(n);
  for (int64_t i = 0; i < n; ++i) {
    gelu_scales(ref_kind, x[i], dout[i], &sfwd[i], &sbwd[i]);
    sbwd[i] += std::fabs(dx[i]);
  }
  FVec fdx = to_float(dx), fdout = to_float(dout);
  ref::gelu_backward(dx.data(), dout.data(), x.data(), n, ref_kind);
  kernels::gelu_backward(fdx.data(), fdout.data(), fx.data(), n, kind);
  if (kind == ref_kind) {
    require_within(fout, out, sfwd, kGeluBound, "gelu out");
    require_within(fdx, dx, sbwd, kGeluBound, "gelu dinp");
    return;
  }
  double worst_f = 0.0, worst_b = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    worst_f = std::max(worst_f, std::fabs(fout[i] - out[i]) / (kU * sfwd[i]));
    worst_b = std::max(worst_b, std::fabs(fdx[i] - dx[i]) / (kU * sbwd[i]));
  }
  INFO("the other GELU is off by " << worst_f << " (forward) and " << worst_b
                                   << " (backward) u·scale, bound " << kGeluBound);
  CHECK(worst_f > 100 * kGeluBound);
  CHECK(worst_b > 100 * kGeluBound);
}

TEST_CASE("gelu kernels match the reference to a few ulps", "[kernels]") {
  check_gelu(kernels::GeluKind::Tanh, kernels::GeluKind::Tanh);
  check_gelu(kernels::GeluKind::Erf, kernels::GeluKind::Erf);
}

TEST_CASE("the gelu bound tells tanh from erf", "[kernels]") {
  check_gelu(kernels::GeluKind::Tanh, kernels::GeluKind::Erf);
  check_gelu(kernels::GeluKind::Erf, kernels::GeluKind::Tanh);
}

// Attention scales: out = Σ_j P·v, so Σ_j P·|v|; dv = Σ_t P·dout; dq, dk
// through dS = P·(dP - D) with |dP| ≤ Σ|dout·v| and |D| ≤ Σ_j P·|dP|. The
// probabilities themselves carry (T + |s - max| + 4)·u relative error (a
// T-term sum and an exp of condition |s - max|); k adds the HS- or T-term
// products.
void attention_scales(const Vec& qkv, const Vec& dout, const Vec& att, double p, uint64_t seed,
                      int64_t B, int64_t T, int64_t C, int64_t NH, Vec* sout, Vec* sdqkv) {
  const int64_t HS = C / NH;
  const double scale = 1.0 / std::sqrt(static_cast<double>(HS));
  // out scale: Σ_j P·M/(1-p)·|v| is the reference forward with |v| (q and k
  // alone set P, so P and the mask are the same).
  Vec tmp_att(att.size());
  Vec vabs = qkv;
  for (int64_t i = 0; i < B * T; ++i)
    for (int64_t c = 0; c < C; ++c) vabs[i * 3 * C + 2 * C + c] = std::fabs(qkv[i * 3 * C + 2 * C + c]);
  ref::attention_forward(sout->data(), tmp_att.data(), vabs.data(), B, T, C, NH, p, seed);
  // Gradient scales by the reference backward on absolute values, with the
  // softmax-backward term P·(|dP| + |D|) in place of P·(dP - D): computed here.
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < NH; ++h)
      for (int64_t t = 0; t < T; ++t) {
        const double* a = att.data() + ((b * NH + h) * T + t) * T;
        auto at = [&](int64_t row, int64_t part) { return (b * T + row) * 3 * C + part * C + h * HS; };
        std::vector<double> dpa(T, 0.0);
        double Da = 0.0;
        for (int64_t j = 0; j <= t; ++j) {
          for (int64_t i = 0; i < HS; ++i) {
            dpa[j] += std::fabs(dout[(b * T + t) * C + h * HS + i] * qkv[at(j, 2) + i]);
            (*sdqkv)[at(j, 2) + i] += a[j] / (1.0 - p) * std::fabs(dout[(b * T + t) * C + h * HS + i]);
          }
          dpa[j] /= (1.0 - p);
          Da += a[j] * dpa[j];
        }
        for (int64_t j = 0; j <= t; ++j) {
          const double ds = a[j] * (dpa[j] + Da) * scale;
          for (int64_t i = 0; i < HS; ++i) {
            (*sdqkv)[at(t, 0) + i] += ds * std::fabs(qkv[at(j, 1) + i]);
            (*sdqkv)[at(j, 1) + i] += ds * std::fabs(qkv[at(t, 0) + i]);
          }
        }
      }
}

TEST_CASE("attention kernels match the reference", "[kernels]") {
  tg::Rng rng(15);
  const int64_t B = 2, T = 13, C = 48, NH = 3, HS = C / NH;
  for (double p : {0.0, 0.25}) {
    const uint64_t seed = 99;
    Vec qkv = testing::float_exact_vector<double>(B * T * 3 * C, rng), dout = testing::float_exact_vector<double>(B * T * C, rng);
    Vec out(B * T * C), att(B * NH * T * T);
    ref::attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH, p, seed);
    Vec dqkv = testing::float_exact_vector<double>(qkv.size(), rng);
    Vec sout(B * T * C), sdqkv = abs_of(dqkv);
    attention_scales(qkv, dout, att, p, seed, B, T, C, NH, &sout, &sdqkv);
    // Scores are HS-term products (|s - max| ≲ 8 here), probabilities T-term sums.
    const double k = T + HS + 16;
    FVec fqkv = to_float(qkv), fout(B * T * C), fatt(B * NH * T * T), scratch(B * NH * T * T);
    kernels::attention_naive_forward(fout.data(), fatt.data(), fqkv.data(), B, T, C, NH, static_cast<float>(p), seed);
    require_within(fout, out, sout, k, "naive attention out");
    Vec satt(att.size());
    for (size_t i = 0; i < att.size(); ++i) satt[i] = att[i];
    require_within(fatt, att, satt, k, "naive attention probabilities");
    FVec fdqkv = to_float(dqkv), fdout = to_float(dout);
    FVec fdqkv2 = fdqkv, fout2(B * T * C), lse(B * NH * T);
    ref::attention_backward(dqkv.data(), dout.data(), qkv.data(), att.data(), B, T, C, NH, p, seed);
    kernels::attention_naive_backward(fdqkv.data(), scratch.data(), fdout.data(), fqkv.data(), fatt.data(), B, T, C,
                                      NH, static_cast<float>(p), seed);
    require_within(fdqkv, dqkv, sdqkv, k, "naive attention dqkv");
    // The blockwise kernel: the same function, the same mask.
    kernels::attention_flash_forward(fout2.data(), lse.data(), fqkv.data(), B, T, C, NH, static_cast<float>(p), seed);
    require_within(fout2, out, sout, k, "flash attention out");
    kernels::attention_flash_backward(fdqkv2.data(), fdout.data(), fout2.data(), fqkv.data(), lse.data(), B, T, C, NH, static_cast<float>(p), seed);
    require_within(fdqkv2, dqkv, sdqkv, k, "flash attention dqkv");
  }
}

TEST_CASE("attention_decode matches the last row of full attention", "[kernels]") {
  tg::Rng rng(16);
  const int64_t T = 11, C = 24, NH = 4;
  FVec qkv = to_float(testing::float_exact_vector<double>(T * 3 * C, rng));
  FVec out(T * C), att(NH * T * T);
  kernels::attention_naive_forward(out.data(), att.data(), qkv.data(), 1, T, C, NH);
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
  // Rows pos0…T-1 in one call (a prompt read in one pass after pos0 cached
  // tokens): each row has the bits of attention_decode at its position.
  const int64_t pos0 = 4, n = T - pos0;
  FVec rows(n * C), rows_scratch(n * NH * T);
  kernels::attention_decode_rows(rows.data(), rows_scratch.data(), qkv.data() + pos0 * 3 * C, kc.data(), vc.data(),
                                 pos0, n, C, NH);
  for (int64_t t = pos0; t < T; ++t) {
    kernels::attention_decode(dec.data(), scratch.data(), qkv.data() + t * 3 * C, kc.data(), vc.data(), t + 1, C, NH);
    for (int64_t c = 0; c < C; ++c) REQUIRE(rows[(t - pos0) * C + c] == dec[c]);
  }
}

TEST_CASE("cross-entropy kernels match the reference, in place too", "[kernels]") {
  tg::Rng rng(17);
  const int64_t N = 21, V = 300;
  Vec logits = testing::float_exact_vector<double>(N * V, rng, 4.0), losses(N), probs(N * V);
  std::vector<int32_t> targets(N);
  for (auto& t : targets) t = static_cast<int32_t>(rng.below(V));
  ref::crossentropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), N, V);
  FVec flogits = to_float(logits), flosses(N);
  kernels::crossentropy_forward(flosses.data(), flogits.data(), flogits.data(), targets.data(), N, V);
  // p = e^{l - max}/Σ: relative error (V + |l - max| + 4)·u (a V-term sum and
  // an exp of condition |l - max|); the loss log Σ + max - l_target is a sum
  // of terms of size |max| + |l_target| + log Σ, each a few ulps.
  Vec sprobs(N * V), slosses(N);
  for (int64_t n = 0; n < N; ++n) {
    double mx = logits[n * V];
    for (int64_t j = 1; j < V; ++j) mx = std::max(mx, logits[n * V + j]);
    for (int64_t j = 0; j < V; ++j) sprobs[n * V + j] = probs[n * V + j] * (4.0 + std::fabs(logits[n * V + j] - mx));
    slosses[n] = std::fabs(mx) + std::fabs(logits[n * V + targets[n]]) + std::log(static_cast<double>(V)) * 2.0;
  }
  require_within(flosses, losses, slosses, V + 4, "cross-entropy losses");
  require_within(flogits, probs, sprobs, V + 4, "cross-entropy probabilities");  // they overwrote the logits
  Vec dlogits = testing::float_exact_vector<double>(N * V, rng);
  Vec sd = abs_of(dlogits);
  for (int64_t i = 0; i < N * V; ++i) sd[i] += 0.25 * (sprobs[i] + (i % V == targets[i / V] ? 1.0 : 0.0));
  FVec fdlogits = to_float(dlogits);
  ref::crossentropy_backward(dlogits.data(), probs.data(), targets.data(), 0.25, N, V);
  kernels::crossentropy_backward(fdlogits.data(), flogits.data(), targets.data(), 0.25f, N, V);
  require_within(fdlogits, dlogits, sd, V + 8, "cross-entropy dlogits");
}

TEST_CASE("softmax with temperature matches the double reference", "[kernels]") {
  tg::Rng rng(21);
  const int64_t N = 5, V = 300;
  for (double temperature : {1.0, 0.7, 2.5}) {
    Vec logits = testing::float_exact_vector<double>(N * V, rng, 4.0), probs(N * V);
    ref::softmax_forward(probs.data(), logits.data(), temperature, N, V);
    FVec flogits = to_float(logits), fprobs(N * V);
    kernels::softmax_forward(fprobs.data(), flogits.data(), static_cast<float>(temperature), N, V);
    Vec s(N * V);  // as cross-entropy's, with the exponent (l - max)/temperature
    for (int64_t n = 0; n < N; ++n) {
      double mx = logits[n * V];
      for (int64_t j = 1; j < V; ++j) mx = std::max(mx, logits[n * V + j]);
      for (int64_t j = 0; j < V; ++j)
        s[n * V + j] = probs[n * V + j] * (4.0 + 2.0 * std::fabs(logits[n * V + j] - mx) / temperature);
    }
    INFO("temperature " << temperature);
    require_within(fprobs, probs, s, V + 4, "softmax");
  }
}

TEST_CASE("dropout kernels match the double reference", "[kernels]") {
  tg::Rng rng(22);
  const int64_t n = 50000;
  for (double p : {0.1, 0.5}) {
    Vec x = testing::float_exact_vector<double>(n, rng), dout = testing::float_exact_vector<double>(n, rng), out(n);
    Vec dx = testing::float_exact_vector<double>(n, rng);
    Vec s = abs_of(x), sdx = abs_of(dx);
    for (int64_t i = 0; i < n; ++i) {
      s[i] /= 1.0 - p;
      sdx[i] += std::fabs(dout[i]) / (1.0 - p);
    }
    ref::dropout_forward(out.data(), x.data(), p, 7, n);
    FVec fx = to_float(x), fout(n), fdx = to_float(dx), fdout = to_float(dout);
    kernels::dropout_forward(fout.data(), fx.data(), static_cast<float>(p), 7, n);
    // x·(1/(1-p)) in float: the scale rounded once, the product once, and
    // 1 - p itself once (p is a float): three roundings; the add one more.
    require_within(fout, out, s, 3, "dropout out");
    ref::dropout_backward(dx.data(), dout.data(), p, 7, n);
    kernels::dropout_backward(fdx.data(), fdout.data(), static_cast<float>(p), 7, n);
    require_within(fdx, dx, sdx, 4, "dropout dinp");
    int64_t kept = 0;
    for (int64_t i = 0; i < n; ++i) kept += out[i] != 0.0;
    // Binomial(n, 1-p): 6 standard deviations.
    CHECK(std::fabs(static_cast<double>(kept) - n * (1 - p)) < 6 * std::sqrt(n * p * (1 - p)));
  }
}

TEST_CASE("adamw_update matches the PyTorch formula and zeroes the gradient", "[kernels]") {
  tg::Rng rng(18);
  const int64_t n = 1000;
  FVec p = to_float(testing::float_exact_vector<double>(n, rng)), m = to_float(testing::float_exact_vector<double>(n, rng, 0.1));
  FVec v(n), g = to_float(testing::float_exact_vector<double>(n, rng));
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
    FVec x = to_float(testing::float_exact_vector<double>(n, rng));
    double want = 0.0;
    for (float v : x) want += double(v) * v;
    CHECK(kernels::sum_squares(x.data(), n) == Approx(want).epsilon(1e-12));
  }
}

TEST_CASE("sum_squares is its chunks' partials added in order, whoever computes which chunks", "[kernels]") {
  // What the sharded optimizer relies on: ranks compute the partials of
  // their own chunks, then add all of them in chunk order.
  tg::Rng rng(23);
  for (int64_t n : {int64_t{40000}, int64_t{5000000}}) {
    FVec x = to_float(testing::float_exact_vector<double>(n, rng));
    const int64_t chunk = kernels::sum_squares_chunk(n), n_chunks = (n + chunk - 1) / chunk;
    CHECK(n_chunks > 2);
    std::vector<double> partial(static_cast<size_t>(n_chunks));
    const int64_t cut = n_chunks / 3;  // two "ranks": [0, cut) and [cut, n_chunks)
    kernels::sum_squares_partials(partial.data(), x.data(), n, 0, cut);
    kernels::sum_squares_partials(partial.data() + cut, x.data(), n, cut, n_chunks);
    double total = 0.0;
    for (double p : partial) total += p;
    CHECK(total == kernels::sum_squares(x.data(), n));  // bit for bit
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

TEST_CASE("fast_exp and fast_erfc are within a few ulps of libm in double", "[kernels]") {
  double worst_exp = 0.0, worst_erfc = 0.0;
  for (double x = -87.0; x <= 87.9; x += 1.0 / 512) {
    const float xf = static_cast<float>(x);
    const double want = std::exp(static_cast<double>(xf));
    worst_exp = std::max(worst_exp, std::fabs(kernels::fast_exp(xf) - want) / want);
  }
  for (double y = -9.0; y <= 9.0; y += 1.0 / 1024) {
    const float yf = static_cast<float>(y);
    const double want = std::erfc(static_cast<double>(yf));
    // Stated bound: 8 ulps plus y²·u from rounding the exponent's argument.
    const double bound = (8.0 + static_cast<double>(yf) * yf) * kU;
    worst_erfc = std::max(worst_erfc, std::fabs(kernels::fast_erfc(yf) - want) / want / bound);
  }
  INFO("fast_exp worst relative error " << worst_exp / kU << " u; fast_erfc worst " << worst_erfc << " of its bound");
  CHECK(worst_exp < 3 * kU);
  CHECK(worst_erfc <= 1.0);
  CHECK(kernels::fast_exp(-1000.0f) > 0.0f);       // clamped, never 0 or subnormal
  CHECK(std::isfinite(kernels::fast_exp(1000.0f)));  // clamped, never inf
}
