// The kernels of the block options (RMSNorm, RoPE, ReLU², SwiGLU) and of the
// logit soft-cap: each reference backward against finite differences in
// double, each fast float kernel against its reference with per-element
// bounds derived from float32 rounding (Note [Tolerances from float32
// rounding] in test_kernels_vs_reference.cpp; the helpers in
// tests/support/float_bounds.h), and RoPE's identities: an offset pos0 is a
// later row, in place is out of place, backward undoes forward. Gradient
// buffers start non-zero, to check that backward kernels ADD (Note [Kernel
// conventions]).
#include <catch2/catch.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "autograd/kernels/kernels.h"
#include "autograd/kernels/reference.h"
#include "support/bits.h"
#include "support/float_bounds.h"
#include "support/gradcheck.h"

namespace ref = kernels::reference;
using testing::to_float;
using Vec = std::vector<double>;
using FVec = std::vector<float>;
using testing::abs_of;
using testing::kU;
using testing::require_within;
using testing::same_bits;

namespace {

// Finite differences as test_reference_gradcheck.cpp: h = 1e-6 in double, a
// correct derivative agrees to ~1e-8…1e-6, a wrong term shows as 1e-1.
constexpr double kH = 1e-6;
constexpr double kTol = 1e-5;

void gradcheck(Vec& x, const Vec& analytic, const std::function<double()>& loss, tg::Rng& rng) {
  CHECK(testing::gradcheck(x, analytic, loss, kH, 1e-3, 64, rng) < kTol);
}

// run() with 1, 2 and 3 OpenMP threads gives the same bits each time
// (Note [Kernel conventions]); sizes above the kernels' `if` thresholds.
void check_thread_count_independent(const std::function<FVec()>& run) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const FVec one = run();
  for (int threads : {2, 3}) {
    omp_set_num_threads(threads);
    INFO(threads << " threads");
    CHECK(same_bits(run(), one));
  }
  omp_set_num_threads(saved);
}

}  // namespace

// ---- RMSNorm -------------------------------------------------------------------

TEST_CASE("reference rmsnorm backward matches finite differences", "[gradcheck][reference][rmsnorm]") {
  tg::Rng rng(41);
  const int64_t N = 3, C = 6;
  Vec x = testing::float_exact_vector<double>(N * C, rng), w = testing::float_exact_vector<double>(C, rng), r = testing::float_exact_vector<double>(N * C, rng);
  for (int64_t c = 0; c < C; ++c) x[c] *= 1e-3;  // a row whose mean square is near eps
  Vec out(N * C), rstd(N);
  auto loss = [&] { ref::rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), N, C); return testing::dot(out, r); };
  loss();
  Vec dx(N * C), dw(C);
  ref::rmsnorm_backward(dx.data(), dw.data(), r.data(), x.data(), w.data(), rstd.data(), N, C);
  gradcheck(x, dx, loss, rng);
  gradcheck(w, dw, loss, rng);
}

// The float kernel (eps 1e-5) against the reference run on x/√a, which is the
// reference on x with eps a·1e-5: (x/√a)/√(ms/a + eps) = x/√(ms + a·eps).
// a = 1 must pass; a = 0.1 (eps 1e-6) must break the bound widely.
void check_rmsnorm(double a, bool expect_pass) {
  tg::Rng rng(42);
  const int64_t N = 29, C = 200;
  Vec x = testing::float_exact_vector<double>(N * C, rng, 3.0), w = testing::float_exact_vector<double>(C, rng),
      dout = testing::float_exact_vector<double>(N * C, rng);
  // Rows 0..4 have a root mean square near √eps (0.003, 0.0015, ...), where
  // eps moves the output by tens of percent: a wrong eps cannot hide there.
  for (int64_t n = 0; n < 5; ++n)
    for (int64_t c = 0; c < C; ++c) x[n * C + c] = static_cast<float>(x[n * C + c] * 1e-3 / (n + 1));
  Vec xr(N * C);
  for (int64_t i = 0; i < N * C; ++i) xr[i] = x[i] / std::sqrt(a);
  Vec out(N * C), rstd(N);
  ref::rmsnorm_forward(out.data(), rstd.data(), xr.data(), w.data(), N, C);
  for (auto& s : rstd) s /= std::sqrt(a);  // rstd of x itself, with eps a·1e-5
  FVec fx = to_float(x), fw = to_float(w), fout(N * C), frstd(N);
  kernels::rmsnorm_forward(fout.data(), frstd.data(), fx.data(), fw.data(), N, C);
  // Forward: the sum of squares is exact in double up to C·2⁻⁵³, so rstd is
  // one rounding off, then x·rstd and ·w one each: 3, and 1 for the double
  // sum, square root and division. Scale |x|·rstd·|w|, the output's size.
  const double k_fwd = 4;
  Vec sout(N * C), srstd(N);
  for (int64_t n = 0; n < N; ++n) {
    srstd[n] = rstd[n];
    for (int64_t c = 0; c < C; ++c) sout[n * C + c] = std::fabs(x[n * C + c] * w[c]) * rstd[n];
  }
  if (!expect_pass) {
    double worst = 0.0;
    for (int64_t i = 0; i < N * C; ++i) worst = std::max(worst, std::fabs(fout[i] - out[i]) / (kU * sout[i]));
    INFO("eps 1e-6 gives " << worst << " u·scale, bound " << k_fwd);
    CHECK(worst > 1000 * k_fwd);
    return;
  }
  require_within(fout, out, sout, k_fwd, "rmsnorm out");
  require_within(frstd, rstd, srstd, 2, "rmsnorm rstd");  // one rounding, plus the double's
  // Backward, with g = dout·w and M = mean_c(g·x̂) (its sum in double, so M
  // is off by rstd's rounding and its own: 2 u): x̂ = x·rstd 2, x̂·M 5, g 1,
  // the difference 1, ·rstd 2, and the accumulation 1: 9 (+1 margin) times
  // rstd·(|g| + |x̂|·mean_c|g·x̂|) + |dinp₀|. dweight: a sum in double of
  // dout·x·rstd, exact up to rstd's rounding, plus the accumulation: 2
  // (+1 margin) times Σ_n |dout·x̂| + |dweight₀|.
  Vec dx = testing::float_exact_vector<double>(N * C, rng), dw = testing::float_exact_vector<double>(C, rng);
  FVec fdx = to_float(dx), fdw = to_float(dw), fdout = to_float(dout);
  Vec sdx = abs_of(dx), sdw = abs_of(dw);
  for (int64_t n = 0; n < N; ++n) {
    double gxm = 0.0;
    for (int64_t c = 0; c < C; ++c) gxm += std::fabs(dout[n * C + c] * w[c] * x[n * C + c]) * rstd[n] / C;
    for (int64_t c = 0; c < C; ++c) {
      const double xhat = std::fabs(x[n * C + c]) * rstd[n];
      sdx[n * C + c] += rstd[n] * (std::fabs(dout[n * C + c] * w[c]) + xhat * gxm);
      sdw[c] += std::fabs(dout[n * C + c]) * xhat;
    }
  }
  ref::rmsnorm_backward(dx.data(), dw.data(), dout.data(), x.data(), w.data(), rstd.data(), N, C);
  kernels::rmsnorm_backward(fdx.data(), fdw.data(), fdout.data(), fx.data(), fw.data(), frstd.data(), N, C);
  require_within(fdx, dx, sdx, 10, "rmsnorm dinp");
  require_within(fdw, dw, sdw, 3, "rmsnorm dweight");
}

TEST_CASE("rmsnorm kernels match the reference", "[kernels][rmsnorm]") { check_rmsnorm(1.0, true); }

TEST_CASE("the rmsnorm bound fails for eps 1e-6 instead of 1e-5", "[kernels][rmsnorm]") {
  check_rmsnorm(0.1, false);
}

TEST_CASE("rmsnorm kernels give the same bits for any thread count", "[kernels][rmsnorm]") {
  tg::Rng rng(43);
  const int64_t N = 67, C = 300;  // N·C above the 16384 threshold
  const FVec x = to_float(testing::float_exact_vector<double>(N * C, rng)), w = to_float(testing::float_exact_vector<double>(C, rng)),
             dout = to_float(testing::float_exact_vector<double>(N * C, rng)), g0 = to_float(testing::float_exact_vector<double>(N * C + C, rng));
  check_thread_count_independent([&] {
    FVec out(N * C), rstd(N), dx(g0.begin(), g0.begin() + N * C), dw(g0.begin() + N * C, g0.end());
    kernels::rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), N, C);
    kernels::rmsnorm_backward(dx.data(), dw.data(), dout.data(), x.data(), w.data(), rstd.data(), N, C);
    FVec all = out;
    all.insert(all.end(), rstd.begin(), rstd.end());
    all.insert(all.end(), dx.begin(), dx.end());
    all.insert(all.end(), dw.begin(), dw.end());
    return all;
  });
}

// ---- QK-norm: RMSNorm with gain 1 of each head's q and k ------------------------

// The reference is rmsnorm's, run on the q and k heads as rows of HS with a
// gain of ones; the bounds are rmsnorm's (check_rmsnorm) with |w| = 1. v is
// copied exactly forward and its gradient passed through exactly.
TEST_CASE("qk_norm kernels match the rmsnorm reference per head, v untouched", "[kernels][qk_norm]") {
  tg::Rng rng(45);
  const int64_t N = 23, NH = 4, HS = 48, C = NH * HS;  // N·C above the threading threshold
  Vec qkv = testing::float_exact_vector<double>(N * 3 * C, rng, 3.0), dout = testing::float_exact_vector<double>(N * 3 * C, rng),
      d0 = testing::float_exact_vector<double>(N * 3 * C, rng);
  for (int64_t c = 0; c < HS; ++c) qkv[c] *= 1e-3;  // one head with an RMS near √eps
  const Vec ones(HS, 1.0);
  // Per token: rows 0..2NH-1 are its q and k heads.
  auto head = [&](int64_t n, int64_t h) { return n * 3 * C + h * HS; };
  Vec out = qkv, rstd(N * 2 * NH), dx = d0;
  Vec sout(qkv.size(), 0.0), srstd(rstd.size()), sdx = abs_of(d0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < 2 * NH; ++h) {
      const int64_t at = head(n, h);
      double& s = rstd[n * 2 * NH + h];
      ref::rmsnorm_forward(&out[at], &s, &qkv[at], ones.data(), 1, HS);
      Vec dw(HS, 0.0);
      ref::rmsnorm_backward(&dx[at], dw.data(), &dout[at], &qkv[at], ones.data(), &s, 1, HS);
      srstd[n * 2 * NH + h] = s;
      double gxm = 0.0;
      for (int64_t c = 0; c < HS; ++c) gxm += std::fabs(dout[at + c] * qkv[at + c]) * s / HS;
      for (int64_t c = 0; c < HS; ++c) {
        sout[at + c] = std::fabs(qkv[at + c]) * s;
        sdx[at + c] += s * (std::fabs(dout[at + c]) + std::fabs(qkv[at + c]) * s * gxm);
      }
    }
  for (int64_t n = 0; n < N; ++n)  // v: dout added to the gradient
    for (int64_t c = 2 * C; c < 3 * C; ++c) {
      dx[n * 3 * C + c] += dout[n * 3 * C + c];
      sdx[n * 3 * C + c] += std::fabs(dout[n * 3 * C + c]);
    }
  FVec fqkv = to_float(qkv), fout(qkv.size()), frstd(rstd.size()), fdx = to_float(d0), fdout = to_float(dout);
  kernels::qk_rmsnorm_forward(fout.data(), frstd.data(), fqkv.data(), N, C, NH);
  kernels::qk_rmsnorm_backward(fdx.data(), fdout.data(), fqkv.data(), frstd.data(), N, C, NH);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 2 * C; c < 3 * C; ++c) {
      REQUIRE(same_bits(&fout[n * 3 * C + c], &fqkv[n * 3 * C + c], 1));
      REQUIRE(fdx[n * 3 * C + c] == static_cast<float>(dx[n * 3 * C + c]));  // d0 + dout, both float-exact: one rounding
    }
  require_within(fout, out, sout, 4, "qk_norm out");
  require_within(frstd, rstd, srstd, 2, "qk_norm rstd");
  require_within(fdx, dx, sdx, 10, "qk_norm dqkv");
}

// ---- RoPE ----------------------------------------------------------------------

TEST_CASE("reference rope backward matches finite differences", "[gradcheck][reference][rope]") {
  tg::Rng rng(51);
  const int64_t B = 2, T = 3, C = 8, NH = 2, pos0 = 7;
  Vec qkv = testing::float_exact_vector<double>(B * T * 3 * C, rng), r = testing::float_exact_vector<double>(B * T * 3 * C, rng), out(qkv.size());
  auto loss = [&] { ref::rope_forward(out.data(), qkv.data(), B, T, C, NH, pos0); return testing::dot(out, r); };
  Vec dqkv(qkv.size());
  ref::rope_backward(dqkv.data(), r.data(), B, T, C, NH, pos0);
  gradcheck(qkv, dqkv, loss, rng);
}

// The size of what produced each element: for a rotated pair, |x·cos| +
// |y·sin| (both outputs: |x·sin| + |y·cos| for y'); for v, |v|.
Vec rope_scales(const Vec& p, int64_t B, int64_t T, int64_t C, int64_t NH, int64_t pos0) {
  const int64_t HS = C / NH;
  Vec s = abs_of(p);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t part = 0; part < 2; ++part)
        for (int64_t h = 0; h < NH; ++h)
          for (int64_t i = 0; i < HS / 2; ++i) {
            const int64_t ix = (b * T + t) * 3 * C + part * C + h * HS + i, iy = ix + HS / 2;
            const double angle = static_cast<double>(pos0 + t) * std::pow(10000.0, -2.0 * i / HS);
            const double c = std::fabs(std::cos(angle)), sn = std::fabs(std::sin(angle));
            s[ix] = std::fabs(p[ix]) * c + std::fabs(p[iy]) * sn;
            s[iy] = std::fabs(p[ix]) * sn + std::fabs(p[iy]) * c;
          }
  return s;
}

TEST_CASE("rope kernels match the reference", "[kernels][rope]") {
  tg::Rng rng(52);
  struct Shape { int64_t B, T, C, NH, pos0; };
  // HS 16; HS 288 (144 pairs: more than one 64-frequency chunk); a far
  // position; one decode row.
  for (const Shape& sh : {Shape{2, 9, 48, 3, 0}, Shape{2, 5, 288, 1, 3}, Shape{3, 4, 32, 2, 100000},
                          Shape{1, 1, 48, 3, 517}}) {
    const int64_t B = sh.B, T = sh.T, C = sh.C, NH = sh.NH, pos0 = sh.pos0, n = B * T * 3 * C;
    INFO("B " << B << " T " << T << " C " << C << " NH " << NH << " pos0 " << pos0);
    Vec qkv = testing::float_exact_vector<double>(n, rng), out(n);
    ref::rope_forward(out.data(), qkv.data(), B, T, C, NH, pos0);
    FVec fqkv = to_float(qkv), fout(n);
    kernels::rope_forward(fout.data(), fqkv.data(), B, T, C, NH, pos0);
    // cos and sin one rounding each (their double error is ~2⁻⁵³ of the
    // angle), the two products and the sum one each: 3 (+1 margin); v is a copy.
    require_within(fout, out, rope_scales(qkv, B, T, C, NH, pos0), 4, "rope out");
    // The transpose: as the forward, plus the accumulation (1).
    Vec dout = testing::float_exact_vector<double>(n, rng), dqkv = testing::float_exact_vector<double>(n, rng);
    Vec s = rope_scales(dout, B, T, C, NH, pos0);
    for (int64_t i = 0; i < n; ++i) s[i] += std::fabs(dqkv[i]);
    FVec fdqkv = to_float(dqkv), fdout = to_float(dout);
    ref::rope_backward(dqkv.data(), dout.data(), B, T, C, NH, pos0);
    kernels::rope_backward(fdqkv.data(), fdout.data(), B, T, C, NH, pos0);
    require_within(fdqkv, dqkv, s, 5, "rope dqkv");
  }
}

TEST_CASE("rope at pos0 equals the later rows of a longer sequence, one decode row too", "[kernels][rope]") {
  tg::Rng rng(53);
  const int64_t B = 2, T = 12, C = 40, NH = 2, P = 5, C3 = 3 * C;
  const FVec qkv = to_float(testing::float_exact_vector<double>(B * T * C3, rng));
  FVec full(qkv.size());
  kernels::rope_forward(full.data(), qkv.data(), B, T, C, NH, 0);
  // Rows P…T-1 of each sequence, rotated on their own from pos0 = P.
  FVec tail(B * (T - P) * C3), tail_out(tail.size()), want(tail.size());
  for (int64_t b = 0; b < B; ++b) {
    std::memcpy(&tail[b * (T - P) * C3], &qkv[(b * T + P) * C3], (T - P) * C3 * sizeof(float));
    std::memcpy(&want[b * (T - P) * C3], &full[(b * T + P) * C3], (T - P) * C3 * sizeof(float));
  }
  kernels::rope_forward(tail_out.data(), tail.data(), B, T - P, C, NH, P);
  CHECK(same_bits(tail_out, want));
  // The KV-cache decode: every row alone, in place, at its position.
  for (int64_t t = 0; t < T; ++t) {
    FVec row(&qkv[t * C3], &qkv[(t + 1) * C3]);
    kernels::rope_forward(row.data(), row.data(), 1, 1, C, NH, t);
    INFO("row " << t);
    CHECK(same_bits(row, FVec(&full[t * C3], &full[(t + 1) * C3])));
  }
}

TEST_CASE("rope in place equals rope out of place", "[kernels][rope]") {
  tg::Rng rng(54);
  const int64_t B = 3, T = 40, C = 64, NH = 4;  // B·T·C above the 16384 threshold
  FVec qkv = to_float(testing::float_exact_vector<double>(B * T * 3 * C, rng)), out(qkv.size());
  kernels::rope_forward(out.data(), qkv.data(), B, T, C, NH, 11);
  kernels::rope_forward(qkv.data(), qkv.data(), B, T, C, NH, 11);
  CHECK(same_bits(qkv, out));
}

TEST_CASE("rope backward undoes rope forward (the rotation is orthogonal)", "[kernels][rope]") {
  tg::Rng rng(55);
  const int64_t B = 2, T = 17, C = 48, NH = 3, HS = C / NH, C3 = 3 * C, pos0 = 900;
  const Vec x = testing::float_exact_vector<double>(B * T * C3, rng);
  const FVec fx = to_float(x);
  FVec rotated(fx.size()), back(fx.size(), 0.0f);
  kernels::rope_forward(rotated.data(), fx.data(), B, T, C, NH, pos0);
  kernels::rope_backward(back.data(), rotated.data(), B, T, C, NH, pos0);
  // Rᵀ·R = I up to rounding. Each rotation errs by at most 3 u·(|x| + |y|)
  // per element of its pair (the bounds above, with |cos|, |sin| ≤ 1). The
  // first's error vector, of norm ≤ √2·3 u·(|x| + |y|), passes through the
  // orthogonal second unchanged in norm; the second's own is ≤ 3 u·(|x'| +
  // |y'|) ≤ 3√2 u·(|x| + |y|), as |x'| + |y'| ≤ √2·‖(x, y)‖: 6√2 < 9. v: a copy.
  Vec s = abs_of(x);
  for (int64_t r = 0; r < B * T; ++r)
    for (int64_t part = 0; part < 2; ++part)
      for (int64_t h = 0; h < NH; ++h)
        for (int64_t i = 0; i < HS / 2; ++i) {
          const int64_t ix = r * C3 + part * C + h * HS + i, iy = ix + HS / 2;
          s[ix] = s[iy] = std::fabs(x[ix]) + std::fabs(x[iy]);
        }
  require_within(back, x, s, 9, "rope_backward(rope_forward(x))");
  for (int64_t r = 0; r < B * T; ++r)
    for (int64_t c = 2 * C; c < C3; ++c) REQUIRE(back[r * C3 + c] == fx[r * C3 + c]);
}

// ---- ReLU² ---------------------------------------------------------------------

TEST_CASE("reference relu2 backward matches finite differences", "[gradcheck][reference][relu2]") {
  tg::Rng rng(61);
  const int64_t n = 40;
  Vec x = testing::float_exact_vector<double>(n, rng, 2.0), r = testing::float_exact_vector<double>(n, rng), out(n);
  // Away from the kink at 0: |x| ≥ 0.01 ≫ h.
  for (auto& v : x)
    if (std::fabs(v) < 0.01) v = v < 0 ? -0.01 - v : 0.01 + v;
  auto loss = [&] { ref::relu2_forward(out.data(), x.data(), n); return testing::dot(out, r); };
  Vec dx(n);
  ref::relu2_backward(dx.data(), r.data(), x.data(), n);
  gradcheck(x, dx, loss, rng);
}

TEST_CASE("relu2 kernels match the reference", "[kernels][relu2]") {
  tg::Rng rng(62);
  const int64_t n = 20000;  // above the 16384 threshold
  Vec x = testing::float_exact_vector<double>(n, rng, 2.0), dout = testing::float_exact_vector<double>(n, rng), out(n);
  x[0] = 0.0;
  x[1] = -0.0;
  x[2] = 1e-30;  // its square is below float's normal range
  ref::relu2_forward(out.data(), x.data(), n);
  FVec fx = to_float(x), fout(n);
  kernels::relu2_forward(fout.data(), fx.data(), n);
  // max(x, 0)·max(x, 0): one rounding of the output's own size.
  require_within(fout, out, out, 1, "relu2 out");
  // dout·(2·max(x, 0)): 2·x is exact, the product and the accumulation one
  // rounding each, on |dout·2x| + |dinp₀|. A missing 2 is off by 0.5 of it.
  Vec dx = testing::float_exact_vector<double>(n, rng), s = abs_of(dx);
  for (int64_t i = 0; i < n; ++i) s[i] += std::fabs(dout[i]) * 2.0 * std::max(x[i], 0.0);
  FVec fdx = to_float(dx), fdout = to_float(dout);
  ref::relu2_backward(dx.data(), dout.data(), x.data(), n);
  kernels::relu2_backward(fdx.data(), fdout.data(), fx.data(), n);
  require_within(fdx, dx, s, 2, "relu2 dinp");
}

// ---- SwiGLU --------------------------------------------------------------------

TEST_CASE("reference swiglu backward matches finite differences", "[gradcheck][reference][swiglu]") {
  tg::Rng rng(71);
  const int64_t N = 3, H = 5;
  Vec x = testing::float_exact_vector<double>(N * 2 * H, rng, 2.0), r = testing::float_exact_vector<double>(N * H, rng), out(N * H);
  auto loss = [&] { ref::swiglu_forward(out.data(), x.data(), N, H); return testing::dot(out, r); };
  Vec dx(N * 2 * H);
  ref::swiglu_backward(dx.data(), r.data(), x.data(), N, H);
  gradcheck(x, dx, loss, rng);
}

TEST_CASE("swiglu kernels match the reference", "[kernels][swiglu]") {
  tg::Rng rng(72);
  const int64_t N = 61, H = 300;  // N·H above the 16384 threshold
  Vec x = testing::float_exact_vector<double>(N * 2 * H, rng, 3.0), dout = testing::float_exact_vector<double>(N * H, rng), out(N * H);
  for (int64_t c = 0; c < H; ++c) x[c] = static_cast<float>(-30.0 + 60.0 * c / (H - 1));  // the tails too
  ref::swiglu_forward(out.data(), x.data(), N, H);
  FVec fx = to_float(x), fout(N * H);
  kernels::swiglu_forward(fout.data(), fx.data(), N, H);
  // σ = 1/(1 + e^{-a}): fast_exp 3 u (its test's bound; the argument -a is
  // exact), 1 + e and the division 1 each: 5; a·σ and ·b one each: 7 (+1),
  // on the output's own size.
  require_within(fout, out, abs_of(out), 8, "swiglu out");
  // da: e·σ = 1 - σ 9 u, a·(1 - σ) 10, 1 + it 11 of (1 + |a|·(1 - σ)); dout·b
  // 1, ·σ 1 + 5, ·(1 + …) 1 + 11, the accumulation 1: 20 (+1), on
  // |dout·b|·σ·(1 + |a|·(1 - σ)) + |da₀|. db: a·σ 6, ·dout 1, the
  // accumulation 1: 8 (+1), on |dout·a·σ| + |db₀|.
  Vec dx = testing::float_exact_vector<double>(N * 2 * H, rng);
  Vec sa(N * H), sb(N * H);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < H; ++c) {
      const double a = x[n * 2 * H + c], b = x[n * 2 * H + H + c], d = dout[n * H + c];
      const double s = 1.0 / (1.0 + std::exp(-a));
      sa[n * H + c] = std::fabs(d * b) * s * (1.0 + std::fabs(a) * (1.0 - s)) + std::fabs(dx[n * 2 * H + c]);
      sb[n * H + c] = std::fabs(d * a) * s + std::fabs(dx[n * 2 * H + H + c]);
    }
  FVec fdx = to_float(dx), fdout = to_float(dout);
  ref::swiglu_backward(dx.data(), dout.data(), x.data(), N, H);
  kernels::swiglu_backward(fdx.data(), fdout.data(), fx.data(), N, H);
  // The a and b halves of each row, checked against their own bounds.
  Vec da(N * H), db(N * H);
  FVec fda(N * H), fdb(N * H);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < H; ++c) {
      da[n * H + c] = dx[n * 2 * H + c];
      db[n * H + c] = dx[n * 2 * H + H + c];
      fda[n * H + c] = fdx[n * 2 * H + c];
      fdb[n * H + c] = fdx[n * 2 * H + H + c];
    }
  require_within(fda, da, sa, 21, "swiglu da");
  require_within(fdb, db, sb, 9, "swiglu db");
}

// ---- Logit soft-cap --------------------------------------------------------------

TEST_CASE("reference softcap backward matches finite differences", "[gradcheck][reference][softcap]") {
  tg::Rng rng(81);
  const int64_t n = 40;
  const double cap = 2.0;  // |x/cap| up to 2: tanh well into its bend
  Vec x = testing::float_exact_vector<double>(n, rng, 4.0), r = testing::float_exact_vector<double>(n, rng), out(n);
  auto loss = [&] { ref::softcap_forward(out.data(), x.data(), n, cap); return testing::dot(out, r); };
  Vec dx(n);
  ref::softcap_backward(dx.data(), r.data(), x.data(), n, cap);
  gradcheck(x, dx, loss, rng);
}

namespace {

// Values across both branches of Note [Softcap precision] (|x/cap| up to 12,
// near 0, around the switch at 0.625).
Vec softcap_inputs(int64_t n, double cap, tg::Rng& rng) {
  Vec x = testing::float_exact_vector<double>(n, rng, 2.0 * cap);
  for (int64_t i = 0; i < 400; ++i) x[i] = static_cast<float>(cap * (-12.0 + 24.0 * i / 399));
  for (int64_t i = 400; i < 500; ++i) x[i] = static_cast<float>(cap * 1e-3 * (i - 450));
  for (int64_t i = 500; i < 600; ++i) x[i] = static_cast<float>(cap * (0.6 + 0.05 * (i - 500) / 100));
  x[600] = 0.0;
  return x;
}

}  // namespace

TEST_CASE("softcap kernels match the reference", "[kernels][softcap]") {
  for (double cap : {15.0, 20.0, 30.0, 2.0}) {  // the caps --logit-softcap offers, and a small one
    INFO("cap " << cap);
    tg::Rng rng(82);
    const int64_t n = 20000;  // above the 16384 threshold
    const Vec x = softcap_inputs(n, cap, rng), dout = testing::float_exact_vector<double>(n, rng);
    Vec out(n);
    ref::softcap_forward(out.data(), x.data(), n, cap);
    const FVec fx = to_float(x);
    FVec fout(n);
    kernels::softcap_forward(fout.data(), fx.data(), n, static_cast<float>(cap));
    // u = x·(1/cap): 2 roundings, and tanh's relative sensitivity to u is
    // u·(1 - t²)/t ≤ 1: 2. tanh itself: Cephes' polynomial 4 (+1 for its
    // float evaluation), or 1 - 2e/(1 + e) with fast_exp's 3 and 3 more
    // roundings, of which at most 0.45/0.55 carries into 1 - s: 6. The
    // product with cap 1: 9, on the output's own size.
    require_within(fout, out, abs_of(out), 9, "softcap out");
    // dout·(1 - t²): near 0, t² ≤ 0.31 carries t's 8 u times 2·0.31/0.69,
    // and the subtraction and product 2: 10; in the tail s = 2e/(1 + e) is
    // relative to s, but e = e^{-2|u|} sees u's absolute error, 2|u|·2 u:
    // 6 + 4|u| + 2. The accumulation 1, on |dout|·(1 - t²) + |dinp₀|.
    Vec dx = testing::float_exact_vector<double>(n, rng), s(n);
    for (int64_t i = 0; i < n; ++i) {
      const double u = std::fabs(x[i] / cap), c = std::cosh(u);
      s[i] = std::fabs(dout[i]) / (c * c) * (1.0 + 4.0 * u / 11.0) + std::fabs(dx[i]);
    }
    FVec fdx = to_float(dx);
    const FVec fdout = to_float(dout);
    ref::softcap_backward(dx.data(), dout.data(), x.data(), n, cap);
    kernels::softcap_backward(fdx.data(), fdout.data(), fx.data(), n, static_cast<float>(cap));
    require_within(fdx, dx, s, 11, "softcap dinp");
  }
}

TEST_CASE("softcap backward over its input gives the bits of a zeroed gradient", "[kernels][softcap]") {
  tg::Rng rng(83);
  const int64_t n = 1000;
  const FVec x = to_float(softcap_inputs(n, 15.0, rng)), dout = to_float(testing::float_exact_vector<double>(n, rng));
  FVec zeroed(n, 0.0f), over = x;
  kernels::softcap_backward(zeroed.data(), dout.data(), x.data(), n, 15.0f);
  kernels::softcap_backward(over.data(), dout.data(), over.data(), n, 15.0f);
  CHECK(same_bits(over, zeroed));
}

TEST_CASE("softcap kernels give the same bits for any thread count", "[kernels][softcap]") {
  tg::Rng rng(84);
  const int64_t n = 40001;  // above the 16384 threshold, and odd
  const FVec x = to_float(softcap_inputs(n, 20.0, rng)), dout = to_float(testing::float_exact_vector<double>(n, rng)),
             d0 = to_float(testing::float_exact_vector<double>(n, rng));
  check_thread_count_independent([&] {
    FVec out(n), dx = d0;
    kernels::softcap_forward(out.data(), x.data(), n, 20.0f);
    kernels::softcap_backward(dx.data(), dout.data(), x.data(), n, 20.0f);
    out.insert(out.end(), dx.begin(), dx.end());
    return out;
  });
}
