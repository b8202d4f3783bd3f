// Muon's kernels (Note [Muon] in train/optimizer.h) against the double
// reference: each Newton–Schulz iteration, the momentum stage and the update
// within bounds from float32 rounding (Note [Tolerances from float32
// rounding] in test_kernels_vs_reference.cpp), muon_update as exactly its
// three stages, and the singular values five iterations leave.
//
// A whole step is checked stage by stage, each stage from the float input
// the kernel gave it: over five iterations the rounding errors compound
// through a map whose absolute-value bound (|a|·|X| + (|b|·|A| + |c|·|A|²)·|X|
// per iteration) grows about 20× each time while the errors themselves do
// not (the iteration cancels them), so an a-priori bound on the composed
// step would be too loose to catch a wrong coefficient; per stage it is
// tight. The composed step is compared with the all-double one as well, at
// the agreement measured.
#include <catch2/catch.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>
#include <vector>

#include "autograd/base/rng.h"
#include "autograd/kernels/bf16.h"
#include "autograd/kernels/kernels.h"
#include "autograd/kernels/reference.h"
#include "support/float_bounds.h"
#include "support/gradcheck.h"
#include "support/no_skip.h"

namespace ref = kernels::reference;
using testing::abs_of;
using testing::require_within;
using testing::to_float;
using Vec = std::vector<double>;
using FVec = std::vector<float>;

namespace {

// The published coefficients (Keller Jordan's Muon) as float32 holds them,
// written here rather than read from kernels.h: the oracle's own copy.
const double kA = static_cast<double>(3.4445f), kB = static_cast<double>(-4.7750f),
             kC = static_cast<double>(2.0315f);

Vec to_double(const FVec& v) { return Vec(v.begin(), v.end()); }

// Eigenvalues of the symmetric n×n matrix s (cyclic Jacobi, in double).
Vec symmetric_eigenvalues(Vec s, int64_t n) {
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0.0;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) off += s[p * n + q] * s[p * n + q];
    if (off < 1e-30) break;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        if (std::fabs(s[p * n + q]) < 1e-300) continue;
        const double theta = (s[q * n + q] - s[p * n + p]) / (2.0 * s[p * n + q]);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0), sn = t * c;
        for (int64_t k = 0; k < n; ++k) {  // columns p, q
          const double kp = s[k * n + p], kq = s[k * n + q];
          s[k * n + p] = c * kp - sn * kq;
          s[k * n + q] = sn * kp + c * kq;
        }
        for (int64_t k = 0; k < n; ++k) {  // rows p, q
          const double pk = s[p * n + k], qk = s[q * n + k];
          s[p * n + k] = c * pk - sn * qk;
          s[q * n + k] = sn * pk + c * qk;
        }
      }
  }
  Vec eig(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) eig[i] = s[i * n + i];
  return eig;
}

// Singular values of x[R, K], R ≤ K, from x·xᵀ's eigenvalues.
Vec singular_values(const Vec& x, int64_t R, int64_t K) {
  Vec g(static_cast<size_t>(R * R));
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < R; ++j)
      for (int64_t k = 0; k < K; ++k) g[i * R + j] += x[i * K + k] * x[j * K + k];
  Vec s = symmetric_eigenvalues(g, R);
  for (double& v : s) v = std::sqrt(std::max(v, 0.0));
  return s;
}

// n×n with orthonormal columns: Gram–Schmidt (twice) on a Gaussian matrix.
Vec random_orthogonal(int64_t n, tg::Rng& rng) {
  Vec q(static_cast<size_t>(n * n));
  for (double& v : q) v = rng.normal();
  for (int64_t j = 0; j < n; ++j)
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t i = 0; i < j; ++i) {
        double d = 0.0;
        for (int64_t k = 0; k < n; ++k) d += q[k * n + i] * q[k * n + j];
        for (int64_t k = 0; k < n; ++k) q[k * n + j] -= d * q[k * n + i];
      }
      double norm = 0.0;
      for (int64_t k = 0; k < n; ++k) norm += q[k * n + j] * q[k * n + j];
      for (int64_t k = 0; k < n; ++k) q[k * n + j] /= std::sqrt(norm);
    }
  return q;
}

// A [rows, cols] matrix U·diag(σ)·Vᵀ with σ from 1 down to 1/condition,
// evenly in log, rounded to float.
Vec conditioned_matrix(int64_t rows, int64_t cols, double condition, tg::Rng& rng) {
  const int64_t r = std::min(rows, cols);
  const Vec U = random_orthogonal(rows, rng), V = random_orthogonal(cols, rng);
  Vec out(static_cast<size_t>(rows * cols));
  for (int64_t k = 0; k < r; ++k) {
    const double sigma = std::pow(condition, -static_cast<double>(k) / static_cast<double>(r - 1));
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) out[i * cols + j] += sigma * U[i * rows + k] * V[j * cols + k];
  }
  for (double& v : out) v = static_cast<float>(v);
  return out;
}

// One kernel iteration on x[R,K] against the reference's from the same
// floats. Σ|terms| of an element is the iteration itself run on |x| with
// |a|, |b|, |c|, and the longest chain of roundings is 2K + 2R + 4 (A's sum
// of K, A·A's of R and the errors A carries into it twice, B·x's sum of R,
// the fused multiply-adds): Note [Tolerances from float32 rounding].
void check_one_iteration(FVec& x, FVec& scratch, int64_t R, int64_t K) {
  Vec want = to_double(x), scale = abs_of(want);
  ref::newton_schulz(want.data(), R, K, 1, kA, kB, kC);
  ref::newton_schulz(scale.data(), R, K, 1, std::fabs(kA), std::fabs(kB), std::fabs(kC));
  kernels::newton_schulz(x.data(), scratch.data(), R, K, 1);
  require_within(x, want, scale, static_cast<double>(2 * K + 2 * R + 4), "newton_schulz iteration");
}

}  // namespace

TEST_CASE("each Newton–Schulz iteration matches the reference; five are five single ones", "[muon]") {
  tg::Rng rng(41);
  for (const auto& [R, K] : std::vector<std::pair<int64_t, int64_t>>{{32, 32}, {24, 80}, {16, 160}}) {
    INFO("x [" << R << ", " << K << "]");
    // Normalised as Muon's first stage leaves it.
    FVec x = to_float(testing::float_exact_vector<double>(R * K, rng));
    double norm = 0.0;
    for (float v : x) norm += static_cast<double>(v) * v;
    for (float& v : x) v = static_cast<float>(v / std::sqrt(norm));
    FVec scratch(static_cast<size_t>(kernels::newton_schulz_scratch_floats(R, K)));
    FVec five = x;
    kernels::newton_schulz(five.data(), scratch.data(), R, K, kernels::kMuonSteps);
    for (int s = 0; s < kernels::kMuonSteps; ++s) {
      INFO("iteration " << s + 1);
      check_one_iteration(x, scratch, R, K);
    }
    CHECK(x == five);
  }
}

TEST_CASE("Newton–Schulz leaves every singular value in the quintic's band", "[muon]") {
  // f(σ) = aσ + bσ³ + cσ⁵ five times: over σ ∈ [2e-3, 1] (σ ≤ 1 after the
  // Frobenius normalisation) the result stays in [0.6818, 1.2024], the
  // upper end being f's maximum on [0, 1] (at σ = 0.5545), which a σ
  // reaches when an earlier iteration leaves it there. Measured with
  // numpy; 1e-3 more either side for float rounding.
  constexpr double kLow = 0.6818 - 1e-3, kHigh = 1.2024 + 1e-3, kSmallestInput = 2e-3;
  tg::Rng rng(42);
  struct Case {
    const char* what;
    int64_t rows, cols;
    double condition;  // 0: Gaussian entries
  };
  for (const Case& c : {Case{"square, condition 100", 32, 32, 100.0}, Case{"wide, condition 100", 24, 72, 100.0},
                        Case{"tall, condition 100", 72, 24, 100.0}, Case{"wide, Gaussian", 24, 72, 0.0},
                        Case{"tall, Gaussian", 96, 32, 0.0}, Case{"square, condition 10", 48, 48, 10.0}}) {
    INFO(c.what);
    Vec g = c.condition > 0 ? conditioned_matrix(c.rows, c.cols, c.condition, rng)
                            : testing::float_exact_vector<double>(c.rows * c.cols, rng);
    const int64_t R = std::min(c.rows, c.cols), K = std::max(c.rows, c.cols);
    // Muon's first stage with no momentum gives x = g/‖g‖_F, transposed when tall.
    FVec x(static_cast<size_t>(c.rows * c.cols)), m(x.size(), 0.0f), grad = to_float(g);
    kernels::muon_momentum(x.data(), m.data(), grad.data(), c.rows, c.cols, 0.0f, 1.0f);
    const Vec before = singular_values(to_double(x), R, K);
    REQUIRE(*std::min_element(before.begin(), before.end()) >= kSmallestInput);
    CHECK(*std::max_element(before.begin(), before.end()) <= 1.0);
    FVec scratch(static_cast<size_t>(kernels::newton_schulz_scratch_floats(R, K)));
    kernels::newton_schulz(x.data(), scratch.data(), R, K, kernels::kMuonSteps);
    const Vec after = singular_values(to_double(x), R, K);
    const double lo = *std::min_element(after.begin(), after.end());
    const double hi = *std::max_element(after.begin(), after.end());
    INFO("singular values in [" << lo << ", " << hi << "]");
    CHECK(lo >= kLow);
    CHECK(hi <= kHigh);
  }
}

// A bf16 run's Newton–Schulz (kernels::newton_schulz_bf16): the same
// iteration with every product's operands rounded to bf16 by the kernels
// checked in test_bf16.cpp. It keeps the singular values in the quintic's
// band widened by bf16's rounding, stays within a few bf16 roundings of
// the float32 iteration (and is not the float32 iteration), and gives the
// same bits at any thread count.
TEST_CASE("Newton–Schulz in bf16: the band, near float32's, thread-count independent", "[muon][bf16]") {
  if (!kernels::bf16_matmul_available()) {
    if (test_support::no_skip()) FAIL("oneDNN has no bf16 matmul here, under TAPEGPT_NO_SKIP=1");
    WARN("oneDNN has no bf16 matmul here: bf16 Newton–Schulz not checked");
    return;
  }
  // bf16 keeps 8 significant bits (unit roundoff 2^-8): a few roundings per
  // iteration move a singular value by a few hundredths at most.
  constexpr double kLow = 0.6818 - 0.05, kHigh = 1.2024 + 0.05;
  tg::Rng rng(43);
  const int restore = omp_get_max_threads();
  for (const auto& [rows, cols, condition] : std::vector<std::tuple<int64_t, int64_t, double>>{
           {32, 32, 100.0}, {24, 72, 100.0}, {72, 24, 0.0}, {48, 160, 10.0}}) {
    INFO("[" << rows << ", " << cols << "], condition " << condition);
    const Vec g = condition > 0 ? conditioned_matrix(rows, cols, condition, rng)
                                : testing::float_exact_vector<double>(rows * cols, rng);
    const int64_t R = std::min(rows, cols), K = std::max(rows, cols);
    FVec x(static_cast<size_t>(rows * cols)), m(x.size(), 0.0f), grad = to_float(g);
    kernels::muon_momentum(x.data(), m.data(), grad.data(), rows, cols, 0.0f, 1.0f);
    FVec scratch(static_cast<size_t>(kernels::newton_schulz_scratch_floats(R, K)));
    FVec fp32 = x;
    kernels::newton_schulz(fp32.data(), scratch.data(), R, K, kernels::kMuonSteps);
    std::vector<FVec> bf16_by_threads;
    for (const int threads : {1, 3}) {
      omp_set_num_threads(threads);
      FVec b = x;
      kernels::newton_schulz_bf16(b.data(), scratch.data(), R, K, kernels::kMuonSteps);
      bf16_by_threads.push_back(b);
    }
    omp_set_num_threads(restore);
    const FVec& b = bf16_by_threads[0];
    CHECK(std::memcmp(b.data(), bf16_by_threads[1].data(), b.size() * sizeof(float)) == 0);
    const Vec after = singular_values(to_double(b), R, K);
    INFO("singular values in [" << *std::min_element(after.begin(), after.end()) << ", "
                                << *std::max_element(after.begin(), after.end()) << "]");
    CHECK(*std::min_element(after.begin(), after.end()) >= kLow);
    CHECK(*std::max_element(after.begin(), after.end()) <= kHigh);
    double diff = 0.0, norm = 0.0;
    for (size_t i = 0; i < b.size(); ++i) {
      diff += (double(b[i]) - fp32[i]) * (double(b[i]) - fp32[i]);
      norm += double(fp32[i]) * fp32[i];
    }
    INFO("‖bf16 - fp32‖ / ‖fp32‖ = " << std::sqrt(diff / norm));
    CHECK(diff > 0.0);                         // the bf16 products ran
    CHECK(std::sqrt(diff / norm) < 0.06);  // measured 1.4-1.5%: rounding, not another map
  }
}

TEST_CASE("a Muon step matches the reference stage by stage and as a whole", "[muon]") {
  tg::Rng rng(43);
  const float momentum = 0.95f, grad_scale = 0.75f, lr = 0.02f, wd = 0.1f;
  for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{48, 16}, {16, 48}, {24, 24}}) {
    INFO("W [" << rows << ", " << cols << "]");
    const int64_t n = rows * cols, R = std::min(rows, cols), K = std::max(rows, cols);
    const Vec p0 = testing::float_exact_vector<double>(n, rng, 0.1), m0 = testing::float_exact_vector<double>(n, rng),
              g0 = testing::float_exact_vector<double>(n, rng);
    FVec scratch(static_cast<size_t>(kernels::muon_scratch_floats(rows, cols)));

    // The fused step, and its three stages run one by one (NS an iteration at a time).
    FVec p = to_float(p0), m = to_float(m0), g = to_float(g0);
    kernels::muon_update(p.data(), m.data(), g.data(), scratch.data(), rows, cols, lr, momentum, wd, grad_scale);
    CHECK(std::all_of(g.begin(), g.end(), [](float v) { return v == 0.0f; }));
    FVec sp = to_float(p0), sm = to_float(m0), sg = to_float(g0), x(static_cast<size_t>(n));
    FVec ns_scratch(static_cast<size_t>(kernels::newton_schulz_scratch_floats(R, K)));

    // 1. Momentum. m' = μ·m + g·s: two roundings of |μ·m| + |g·s|. u = g·s + μ·m'
    //    carries at most four of S_u = |g·s| + μ·(|μ·m| + |g·s|), and x = u/N,
    //    N = ‖u‖_F + eps, takes u's error over N, N's relative error
    //    (≤ ‖4u·S_u‖/‖u‖) and two more roundings of |x|.
    kernels::muon_momentum(x.data(), sm.data(), sg.data(), rows, cols, momentum, grad_scale);
    Vec want_m = m0, want_x(static_cast<size_t>(n));
    ref::muon_momentum(want_x.data(), want_m.data(), g0.data(), rows, cols, momentum, grad_scale);
    Vec scale_m(static_cast<size_t>(n)), s_u(static_cast<size_t>(n));
    double s_u_norm = 0.0, u_norm = 0.0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t i = r * cols + c, xi = rows > cols ? c * rows + r : i;
        const double gs = std::fabs(g0[i] * grad_scale), mm = std::fabs(momentum * m0[i]);
        scale_m[i] = mm + gs;
        s_u[xi] = gs + momentum * (mm + gs);
        s_u_norm += s_u[xi] * s_u[xi];
        const double u = g0[i] * grad_scale + momentum * want_m[i];
        u_norm += u * u;
      }
    require_within(sm, want_m, scale_m, 2, "momentum m");
    const double N = std::sqrt(u_norm) + kernels::kMuonEps;
    Vec scale_x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      scale_x[i] = s_u[i] / N + std::fabs(want_x[i]) * (std::sqrt(s_u_norm / u_norm) + 1.0);
    require_within(x, want_x, scale_x, 6, "normalised Nesterov update x");

    // 2. Newton–Schulz, each iteration from the kernel's own float input.
    for (int s = 0; s < kernels::kMuonSteps; ++s) {
      INFO("iteration " << s + 1);
      check_one_iteration(x, ns_scratch, R, K);
    }

    // 3. The update: param·(1 - lr·wd) rounds the factor and the product,
    //    lr·√max(1, rows/cols) once, the fused subtraction once.
    kernels::muon_apply(sp.data(), x.data(), rows, cols, lr, wd);
    Vec want_p = p0;
    const Vec xd = to_double(x);
    ref::muon_apply(want_p.data(), xd.data(), rows, cols, lr, wd);
    Vec scale_p = abs_of(p0);
    const Vec ax = abs_of(xd);
    ref::muon_apply(scale_p.data(), ax.data(), rows, cols, -lr, 0.0);  // |p| + lr·s·|x|
    require_within(sp, want_p, scale_p, 4, "weights");

    CHECK(sp == p);  // the fused step is the three stages
    CHECK(sm == m);

    // The whole step in double. Measured: within 5e-6 of the update's
    // largest element (float32 through five iterations). a or b off by 1e-4
    // (their last digit) in the kernel moves it by 4e-4 or more, a missing
    // Nesterov term by 0.4: 1e-4 fails both (tried), and the stage checks
    // above fail for a and for Nesterov on their own.
    Vec whole_p = p0, whole_m = m0;
    ref::muon_update(whole_p.data(), whole_m.data(), g0.data(), rows, cols, lr, momentum, wd, grad_scale);
    double largest = 0.0, worst = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      largest = std::max(largest, std::fabs(whole_p[i] - p0[i]));
      worst = std::max(worst, std::fabs(static_cast<double>(p[i]) - whole_p[i]));
    }
    INFO("largest update " << largest << ", worst deviation " << worst);
    CHECK(worst <= 1e-4 * largest);
  }
}
