// The bf16 kernels (bf16.h): rounding to bf16 bit for bit, and the linear
// layer's bf16 matmuls against the double reference that rounds its operands
// to bf16 first (reference.h), with bounds from float32 summation (Note
// [bf16 matmuls]). Also run by CTest with oneDNN capped below its native
// instruction set: at AVX512_CORE (test_bf16_isa_avx512_core: bf16 through
// float32 FMAs) the dispatch is reported and the results hold their bounds;
// at AVX2 (test_bf16_isa_avx2) oneDNN 2.6 has no bf16 matmul, and the
// kernels must say so.
//
// Note [bf16 bounds]
// With both operands bf16 every product is exact in float32, so the kernel
// differs from the reference only by float32 summation: |got - want| ≤
// k·u·Σ|a·b| with k the sum's length plus a few, as the float32 kernels
// (Note [Tolerances from float32 rounding]). That worst-case bound grows
// with the length K of the sum while a wrong operand rounding moves a result
// by about 2^-9·√K·|a·b|, so for long sums it could hide one: the check
// "bf16 linear kernels are exact where float32 sums are" closes that gap.
// Its operands round to bf16 values of magnitude 1 to 2 (multiples of 2^-7),
// so products are multiples of 2^-14 of at most 4 and, for K ≤ 250 (with a
// starting value or bias below 4), every partial sum in any order stays
// below 2^10 and is exact in float32: the kernels must equal the
// reference exactly, and a missing rounding, or a truncation instead of
// ties-to-even, is off by at least 2^-14 (checked by breaking each, issue 22).
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "autograd/kernels/bf16.h"
#include "autograd/kernels/kernels.h"
#include "autograd/kernels/reference.h"
#include "support/bits.h"
#include "support/float_bounds.h"
#include "support/gradcheck.h"
#include "support/no_skip.h"

namespace ref = kernels::reference;
using testing::abs_of;
using testing::require_within;
using Vec = std::vector<double>;
using FVec = std::vector<float>;

namespace {

using testing::bits_of;
using testing::float_of;

uint16_t round_one(uint32_t float_bits) {
  const float f = float_of(float_bits);
  uint16_t b;
  kernels::round_to_bf16(&b, &f, 1);
  return b;
}

// oneDNN's instruction sets below AVX-512: no bf16 matmul there (2.6).
bool isa_below_avx512(const std::string& isa) {
  return isa == "sse41" || isa == "avx" || isa == "avx2" || isa == "avx2_vnni";
}

// The bf16 matmuls need oneDNN; CI installs it (scripts/setup.sh), so there
// a build without it fails here instead of skipping. Below AVX-512 (a CPU
// without it, or test_bf16_isa_avx2's cap) oneDNN has no bf16 matmul: the
// numeric checks cannot run, and "oneDNN's instruction set and AMX are
// reported" checks that the kernels say so.
bool have_bf16_matmul() {
  if (kernels::bf16_matmul_available()) return true;
  const std::string isa = kernels::dnnl_effective_isa();
  if (isa != "none" && isa_below_avx512(isa)) {
    // Capped on purpose (test_bf16_isa_avx2): unavailability is the check.
    // A CPU without AVX-512 under TAPEGPT_NO_SKIP=1 fails instead: the
    // numeric checks would silently not run.
    if (!std::getenv("ONEDNN_MAX_CPU_ISA") && test_support::no_skip())
      FAIL("this CPU gives oneDNN only " << isa << " (no bf16 matmul below AVX-512): the bf16 checks cannot run");
    WARN("oneDNN runs " << isa << ": no bf16 matmul below AVX-512, numeric checks not run");
    return false;
  }
  if (test_support::no_skip()) FAIL("built without oneDNN (libdnnl-dev), under TAPEGPT_NO_SKIP=1");
  WARN("built without oneDNN: bf16 matmul checks skipped");
  return false;
}

std::vector<uint16_t> to_bf16(const FVec& x) {
  std::vector<uint16_t> b(x.size());
  kernels::round_to_bf16(b.data(), x.data(), static_cast<int64_t>(x.size()));
  return b;
}

struct LinearResults {
  FVec out, dinp, dweight;
};

// The kernels on float inputs rounded by round_to_bf16 (as a caller would),
// gradients starting at `grad_init` (they must be added to).
LinearResults run_bf16_kernels(const Vec& x, const Vec& w, const Vec& b, const Vec& dout, const Vec& dx0,
                               const Vec& dw0, bool with_bias, int64_t N, int64_t IC, int64_t OC) {
  const auto bx = to_bf16(testing::to_float(x)), bw = to_bf16(testing::to_float(w)),
             bdout = to_bf16(testing::to_float(dout));
  const FVec fb = testing::to_float(b);
  LinearResults r{FVec(N * OC), testing::to_float(dx0), testing::to_float(dw0)};
  kernels::linear_forward_bf16(r.out.data(), bx.data(), bw.data(), with_bias ? fb.data() : nullptr, N, IC, OC);
  kernels::linear_backward_bf16(r.dinp.data(), r.dweight.data(), bdout.data(), bx.data(), bw.data(), N, IC, OC);
  return r;
}

// Random values that round to bf16 values of magnitude 1 to 2 (Note [bf16
// bounds]) with all 23 mantissa bits random, so every rounding decision,
// ties included, is made somewhere.
Vec exact_sum_operands(int64_t n, tg::Rng& rng) {
  Vec v(n);
  for (double& x : v) {
    const uint32_t mantissa = static_cast<uint32_t>(rng.below(1u << 23));
    const uint32_t tie_or_not = rng.below(8) == 0 ? (mantissa & ~0xffffu) | 0x8000u : mantissa;  // 1 in 8 a tie
    const float f = float_of((rng.below(2) ? 0xbf800000u : 0x3f800000u) | tie_or_not);
    x = f;
  }
  return v;
}

// Values that are multiples of 2^-14 of magnitude below 4: exact in every
// sum above (a bias, a gradient's starting value).
Vec exact_sum_addends(int64_t n, tg::Rng& rng) {
  Vec v(n);
  for (double& x : v) x = (static_cast<double>(rng.below(1u << 16)) - 32768.0) * 0x1p-14;
  return v;
}

void require_equal(const FVec& got, const Vec& want, const char* what) {
  REQUIRE(got.size() == want.size());
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (static_cast<double>(got[i]) != want[i] && wrong++ == 0) first = i;
  INFO(what << ": " << wrong << " of " << got.size() << " differ; first at " << first << ": got "
            << got[first] << " want " << want[first]);
  CHECK(wrong == 0);
}

// The three results equal the double reference's on the same operands
// (which it rounds to bf16 itself), every element.
void require_equal_to_reference(const LinearResults& got, const Vec& x, const Vec& w, const Vec& b, const Vec& dout,
                                const Vec& dx0, const Vec& dw0, int64_t N, int64_t IC, int64_t OC,
                                const std::string& what) {
  Vec out(N * OC), dx(dx0), dw(dw0);
  ref::linear_forward_bf16(out.data(), x.data(), w.data(), b.data(), N, IC, OC);
  ref::linear_backward_bf16(dx.data(), dw.data(), dout.data(), x.data(), w.data(), N, IC, OC);
  require_equal(got.out, out, (what + " out").c_str());
  require_equal(got.dinp, dx, (what + " dinp").c_str());
  require_equal(got.dweight, dw, (what + " dweight").c_str());
}

}  // namespace

TEST_CASE("round_to_bf16 rounds to nearest, ties to even, at the edges", "[bf16]") {
  struct Case {
    uint32_t in;
    uint16_t want;
    const char* what;
  };
  const Case cases[] = {
      {0x3f800000, 0x3f80, "1 exactly"},
      {0x3f807fff, 0x3f80, "just below half an ulp above 1: down"},
      {0x3f808000, 0x3f80, "a tie above 1, even below: down"},
      {0x3f808001, 0x3f81, "just above half: up"},
      {0x3f818000, 0x3f82, "a tie above an odd bf16: up to even"},
      {0xbf818000, 0xbf82, "negative tie: to even, by magnitude"},
      {0xbf808000, 0xbf80, "negative tie, even below"},
      {0x3fffffff, 0x4000, "carry into the exponent"},
      {0x00000000, 0x0000, "+0"},
      {0x80000000, 0x8000, "-0 keeps its sign"},
      {0x7f800000, 0x7f80, "+Inf"},
      {0xff800000, 0xff80, "-Inf"},
      {0x7f7f0000, 0x7f7f, "bf16's largest finite"},
      {0x7f7f7fff, 0x7f7f, "below the midpoint to Inf: largest finite"},
      {0x7f7f8000, 0x7f80, "the midpoint to Inf (odd below): Inf"},
      {0x7f7fffff, 0x7f80, "float's largest: Inf"},
      {0xff7fffff, 0xff80, "float's most negative: -Inf"},
      {0x00000001, 0x0000, "smallest subnormal: 0"},
      {0x00008000, 0x0000, "subnormal tie, even below: 0"},
      {0x00008001, 0x0001, "subnormal just above half: bf16's smallest subnormal"},
      {0x00018000, 0x0002, "subnormal tie, odd below: up"},
      {0x807fffff, 0x8080, "largest subnormal: up to -(smallest normal)"},
      {0x00800000, 0x0080, "smallest normal"},
  };
  for (const Case& c : cases) {
    INFO(c.what << ": input 0x" << std::hex << c.in);
    CHECK(round_one(c.in) == c.want);
  }
  // NaN stays NaN (quiet, sign kept), whatever its payload: the rounding
  // carry must not turn a payload into Inf.
  for (const uint32_t nan : {0x7fc00000u, 0x7f800001u, 0x7fffffffu, 0x7f80ffffu, 0xff800001u, 0xffc12345u}) {
    const uint16_t b = round_one(nan);
    INFO("NaN 0x" << std::hex << nan << " -> 0x" << b);
    CHECK(std::isnan(kernels::bf16_to_float(b)));
    CHECK((b & 0x40) != 0);                  // quiet
    CHECK((b >> 15) == (nan >> 31));         // sign
  }
}

TEST_CASE("round_to_bf16 agrees with the double reference on every class of float", "[bf16]") {
  // Every bf16 (all 65,536 upper halves) with the lower halves at and
  // around the tie, then random bit patterns; one call of over 64K values
  // also runs the threaded path.
  std::vector<uint32_t> in;
  for (uint32_t hi = 0; hi < 0x10000u; ++hi)
    for (const uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) in.push_back(hi << 16 | lo);
  tg::Rng rng(5);
  for (int i = 0; i < 200000; ++i) in.push_back(static_cast<uint32_t>(rng.next_u64()));
  FVec f(in.size());
  for (size_t i = 0; i < in.size(); ++i) f[i] = float_of(in[i]);
  std::vector<uint16_t> got(f.size());
  kernels::round_to_bf16(got.data(), f.data(), static_cast<int64_t>(f.size()));
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    const float g = kernels::bf16_to_float(got[i]);
    const bool ok = std::isnan(f[i]) ? std::isnan(g) && std::signbit(g) == std::signbit(f[i])
                                     : bits_of(g) == bits_of(static_cast<float>(ref::round_to_bf16(f[i])));
    if (!ok && wrong++ == 0) first = i;
  }
  INFO(wrong << " of " << f.size() << " differ; first: input 0x" << std::hex << in[first] << " -> 0x" << got[first]);
  CHECK(wrong == 0);
}

TEST_CASE("bf16 linear kernels match the bf16-rounded reference", "[bf16][bf16-matmul]") {
  if (!have_bf16_matmul()) return;
  tg::Rng rng(31);
  struct Shape {
    int64_t N, IC, OC;
  };
  // One row; odd sizes; then GPT shapes of the S and M benchmarks and
  // GPT-2's (BENCHMARKS.md) with fewer rows: qkv, the MLP's two, a small
  // lm_head. The larger are cut into pieces (Note [bf16 matmuls]).
  const Shape shapes[] = {{1, 96, 80},     {37, 97, 83},    {7, 1, 3},       {64, 256, 768},
                          {96, 384, 1536}, {96, 1536, 384}, {130, 256, 65},  {32, 768, 2304}};
  for (const Shape& s : shapes) {
    const int64_t N = s.N, IC = s.IC, OC = s.OC;
    for (const bool with_bias : {true, false}) {
      INFO("N=" << N << " IC=" << IC << " OC=" << OC << (with_bias ? " with bias" : ""));
      const Vec x = testing::float_exact_vector<double>(N * IC, rng),
                w = testing::float_exact_vector<double>(OC * IC, rng),
                b = testing::float_exact_vector<double>(OC, rng),
                dout = testing::float_exact_vector<double>(N * OC, rng),
                dx0 = testing::float_exact_vector<double>(N * IC, rng),
                dw0 = testing::float_exact_vector<double>(OC * IC, rng);
      const LinearResults got = run_bf16_kernels(x, w, b, dout, dx0, dw0, with_bias, N, IC, OC);

      Vec out(N * OC), dx(dx0), dw(dw0);
      ref::linear_forward_bf16(out.data(), x.data(), w.data(), with_bias ? b.data() : nullptr, N, IC, OC);
      ref::linear_backward_bf16(dx.data(), dw.data(), dout.data(), x.data(), w.data(), N, IC, OC);
      // Σ|terms| per element: the same products on absolute values (bf16
      // rounding is symmetric, so rounding |x| gives |rounded x|).
      const Vec ax = abs_of(x), aw = abs_of(w), ab = abs_of(b), adout = abs_of(dout);
      Vec sout(N * OC), sdx = abs_of(dx0), sdw = abs_of(dw0);
      ref::linear_forward_bf16(sout.data(), ax.data(), aw.data(), with_bias ? ab.data() : nullptr, N, IC, OC);
      ref::linear_backward_bf16(sdx.data(), sdw.data(), adout.data(), ax.data(), aw.data(), N, IC, OC);
      require_within(got.out, out, sout, IC + 2, "bf16 linear out");
      require_within(got.dinp, dx, sdx, OC + 2, "bf16 linear dinp");
      require_within(got.dweight, dw, sdw, N + 2, "bf16 linear dweight");
    }
  }
}

TEST_CASE("bf16 linear kernels are exact where float32 sums are", "[bf16][bf16-matmul]") {
  if (!have_bf16_matmul()) return;
  tg::Rng rng(37);
  // Sums of at most 250 terms (Note [bf16 bounds]); the second shape's three
  // products are each cut into 3 pieces (Note [bf16 matmuls]).
  for (const auto& [N, IC, OC] : {std::array<int64_t, 3>{37, 197, 83}, std::array<int64_t, 3>{200, 250, 240}}) {
    INFO("N=" << N << " IC=" << IC << " OC=" << OC);
    const Vec x = exact_sum_operands(N * IC, rng), w = exact_sum_operands(OC * IC, rng),
              dout = exact_sum_operands(N * OC, rng), b = exact_sum_addends(OC, rng),
              dx0 = exact_sum_addends(N * IC, rng), dw0 = exact_sum_addends(OC * IC, rng);
    const LinearResults got = run_bf16_kernels(x, w, b, dout, dx0, dw0, true, N, IC, OC);
    require_equal_to_reference(got, x, w, b, dout, dx0, dw0, N, IC, OC, "bf16 linear");
  }
}

TEST_CASE("oneDNN's whole calls, bench --bf16-rate's reference, are exact where float32 sums are",
          "[bf16][bf16-matmul]") {
  if (!have_bf16_matmul()) return;
  tg::Rng rng(41);
  const int64_t N = 200, IC = 250, OC = 240;  // sums of at most 250 terms (Note [bf16 bounds])
  const Vec x = exact_sum_operands(N * IC, rng), w = exact_sum_operands(OC * IC, rng),
            dout = exact_sum_operands(N * OC, rng), b = exact_sum_addends(OC, rng),
            dx0 = exact_sum_addends(N * IC, rng), dw0 = exact_sum_addends(OC * IC, rng);
  const auto bx = to_bf16(testing::to_float(x)), bw = to_bf16(testing::to_float(w)),
             bdout = to_bf16(testing::to_float(dout));
  const FVec fb = testing::to_float(b);
  LinearResults got{FVec(N * OC), testing::to_float(dx0), testing::to_float(dw0)};
  kernels::linear_forward_bf16_whole_call(got.out.data(), bx.data(), bw.data(), fb.data(), N, IC, OC);
  kernels::linear_backward_bf16_whole_call(got.dinp.data(), got.dweight.data(), bdout.data(), bx.data(), bw.data(), N,
                                           IC, OC);
  require_equal_to_reference(got, x, w, b, dout, dx0, dw0, N, IC, OC, "whole-call bf16 linear");
  // Both sets of oneDNN implementations are named (bench's JSON reports them).
  kernels::linear_forward_bf16(got.out.data(), bx.data(), bw.data(), fb.data(), N, IC, OC);
  for (const auto& names : {kernels::bf16_matmul_kernels(), kernels::bf16_whole_call_kernels()}) {
    REQUIRE_FALSE(names.empty());
    for (const std::string& name : names) CHECK_FALSE(name.empty());
  }
}

TEST_CASE("oneDNN's instruction set and AMX are reported", "[bf16][bf16-matmul]") {
  const std::string isa = kernels::dnnl_effective_isa();
  if (isa == "none" && !have_bf16_matmul()) return;
  INFO("oneDNN " << kernels::dnnl_version() << " runs " << isa);
  CHECK(isa != "unknown");
  CHECK(kernels::bf16_matmul_available() == !isa_below_avx512(isa));
  // Under ONEDNN_MAX_CPU_ISA (test_bf16_isa_avx2) CTest says what to expect.
  if (const char* want = std::getenv("TAPEGPT_EXPECT_DNNL_ISA")) CHECK(isa == want);
  // AMX-BF16 by CPUID as the kernel reports it in /proc/cpuinfo.
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  bool listed = false;
  while (std::getline(cpuinfo, line))
    if (line.rfind("flags", 0) == 0) {
      listed = (line + " ").find(" amx_bf16 ") != std::string::npos;
      break;
    }
  CHECK(kernels::cpu_has_amx_bf16() == listed);
  if (!listed) CHECK_FALSE(kernels::amx_bf16_usable());
  // AMX is used only where oneDNN dispatches to it.
  if (isa.find("amx") == std::string::npos) CHECK_FALSE(kernels::amx_bf16_usable());
}
