// Split float32 masters (Note [Split master weights] in
// autograd/kernels/split_master.h): the two planes give every float back
// but the one nudged case, the high plane is round_to_bf16's copy, the
// in-place conversion moves every value where it belongs, and the update
// kernels on split masters give the float32 kernels' bits.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "autograd/base/rng.h"
#include "autograd/kernels/bf16.h"
#include "autograd/kernels/kernels.h"
#include "autograd/kernels/split_master.h"
#include "support/bits.h"
#include "support/no_skip.h"

namespace {

using FVec = std::vector<float>;

using testing::bits_of;
using testing::float_of;
using testing::same_bits;

// What a split master reads back as, worked out on the bits: x itself, or
// one unit in the last place up when it lies halfway between two bf16
// values and its kept half is odd (rounding up).
uint32_t expected_back(uint32_t u) {
  return (u & 0xffffu) == 0x8000u && (u & 0x10000u) ? u + 1 : u;
}

bool is_nan(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

// Every bf16 upper half with low halves at and around the tie and the ends,
// then random patterns.
std::vector<uint32_t> every_class_of_float() {
  std::vector<uint32_t> in;
  for (uint32_t upper = 0; upper < 0x10000u; ++upper)
    for (uint32_t low : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) in.push_back(upper << 16 | low);
  tg::Rng rng(47);
  for (int i = 0; i < 100000; ++i) in.push_back(static_cast<uint32_t>(rng.next_u64()));
  return in;
}

FVec random_floats(tg::Rng& rng, int64_t n, double scale) {
  FVec x(static_cast<size_t>(n));
  for (float& f : x) f = static_cast<float>(scale * rng.normal());
  return x;
}

// Each of x split into the planes hi and lo.
void split_all(const FVec& x, std::vector<uint16_t>* hi, std::vector<uint16_t>* lo) {
  hi->resize(x.size());
  lo->resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) kernels::split_master(x[i], &(*hi)[i], &(*lo)[i]);
}

// The float32 values split masters read back as, and whether each plane is
// what split_master makes of `want` (hi: round_to_bf16's copy).
void check_planes_hold(const std::vector<uint16_t>& hi, const std::vector<uint16_t>& lo, const FVec& want) {
  REQUIRE(hi.size() == want.size());
  std::vector<uint16_t> copy(want.size());
  kernels::round_to_bf16(copy.data(), want.data(), static_cast<int64_t>(want.size()));
  int64_t wrong_copy = 0, wrong_value = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    wrong_copy += hi[i] != copy[i];
    wrong_value += bits_of(kernels::join_master(hi[i], lo[i])) != expected_back(bits_of(want[i]));
  }
  CHECK(wrong_copy == 0);
  CHECK(wrong_value == 0);
}

}  // namespace

TEST_CASE("split masters read back exactly but for the nudged tie; the high half is the bf16 copy",
          "[split-master]") {
  const std::vector<uint32_t> in = every_class_of_float();
  int64_t nudged = 0;
  for (uint32_t u : in) {
    uint16_t hi, lo;
    kernels::split_master(float_of(u), &hi, &lo);
    const uint32_t back = bits_of(kernels::join_master(hi, lo));
    INFO(std::hex << "x = 0x" << u << ", hi 0x" << hi << ", lo 0x" << lo << ", back 0x" << back);
    // The copy is round_to_bf16's (ties to even) of the master as given.
    REQUIRE(hi == kernels::float_to_bf16(float_of(u)));
    if (is_nan(u)) {
      REQUIRE(is_nan(back));
      continue;
    }
    REQUIRE(back == expected_back(u));
    nudged += back != u;
    // Splitting what came back gives the same planes: the nudge happens once.
    uint16_t hi2, lo2;
    kernels::split_master(float_of(back), &hi2, &lo2);
    REQUIRE((hi2 == hi && lo2 == lo));
  }
  // The halfway values with an odd kept half, 32,768 of the upper halves
  // less the NaN ones, and no others.
  CHECK(nudged > 32000);
  CHECK(nudged < 32768);
}

TEST_CASE("split_master_in_place and join_master_in_place move every value where it belongs",
          "[split-master]") {
  tg::Rng rng(48);
  // Sizes inside one scratch pass, past it (the recursive path, odd halves),
  // and empty.
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{65536}, int64_t{65537}, int64_t{300001}}) {
    INFO("n = " << n);
    FVec x = random_floats(rng, n, 0.02);
    // Some exact ties, both parities, so the nudge is exercised in place too.
    for (int64_t i = 0; i < n; i += 97) x[static_cast<size_t>(i)] = float_of((bits_of(x[i]) & 0xffff0000u) | 0x8000u);
    FVec buf = x;
    kernels::split_master_in_place(buf.data(), n);
    std::vector<uint16_t> hi(static_cast<size_t>(n)), lo(static_cast<size_t>(n));
    const uint16_t* planes = reinterpret_cast<const uint16_t*>(buf.data());
    std::copy_n(planes, n, hi.begin());
    std::copy_n(planes + n, n, lo.begin());
    check_planes_hold(hi, lo, x);
    kernels::join_master_in_place(buf.data(), n);
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) wrong += bits_of(buf[i]) != expected_back(bits_of(x[i]));
    CHECK(wrong == 0);
  }
}

TEST_CASE("adamw_update_split gives adamw_update's bits, split", "[split-master]") {
  // Random weights have random low halves: a plane written wrong, a copy
  // not rounded to nearest, or a master not read back whole shows on many.
  tg::Rng rng(49);
  for (int64_t n : {int64_t{1001}, int64_t{100003}}) {  // one thread, and threaded (n > 32K)
    INFO("n = " << n);
    const FVec p0 = random_floats(rng, n, 0.02), m0 = random_floats(rng, n, 1e-3), g0 = random_floats(rng, n, 1e-2);
    FVec v0 = random_floats(rng, n, 1e-4);
    for (float& x : v0) x = std::fabs(x);
    // The float32 run starts from what the split one holds (nudged ties).
    std::vector<uint16_t> hi, lo;
    split_all(p0, &hi, &lo);
    FVec p(static_cast<size_t>(n));
    kernels::join_master(p.data(), hi.data(), lo.data(), n);
    FVec m = m0, v = v0, g = g0;
    kernels::adamw_update(p.data(), m.data(), v.data(), g.data(), n, 6e-4f, 0.9f, 0.95f, 1e-8f, 0.1f, 5, 0.7f);
    FVec ms = m0, vs = v0, gs = g0;
    kernels::adamw_update_split(hi.data(), lo.data(), ms.data(), vs.data(), gs.data(), n, 6e-4f, 0.9f, 0.95f,
                                1e-8f, 0.1f, 5, 0.7f);
    CHECK(same_bits(m, ms));
    CHECK(same_bits(v, vs));
    CHECK(same_bits(g, gs));
    check_planes_hold(hi, lo, p);
  }
}

TEST_CASE("muon_update_split gives the bits of Muon's stages in bf16, split", "[split-master][bf16]") {
  if (!kernels::bf16_matmul_available()) {
    if (test_support::no_skip()) FAIL("oneDNN has no bf16 matmul here, under TAPEGPT_NO_SKIP=1");
    WARN("oneDNN has no bf16 matmul here: muon_update_split not checked");
    return;
  }
  tg::Rng rng(50);
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{96, 400}, std::pair<int64_t, int64_t>{400, 96}}) {
    INFO(rows << " x " << cols);
    const int64_t n = rows * cols;
    const FVec p0 = random_floats(rng, n, 0.02), m0 = random_floats(rng, n, 1e-3), g0 = random_floats(rng, n, 1e-2);
    std::vector<uint16_t> hi, lo;
    split_all(p0, &hi, &lo);
    FVec p(static_cast<size_t>(n));
    kernels::join_master(p.data(), hi.data(), lo.data(), n);
    // The reference: muon_update's three stages with Newton–Schulz in bf16.
    FVec scratch(static_cast<size_t>(kernels::muon_scratch_floats(rows, cols)));
    FVec m = m0, g = g0;
    kernels::muon_momentum(scratch.data(), m.data(), g.data(), rows, cols, 0.95f, 0.7f);
    kernels::newton_schulz_bf16(scratch.data(), scratch.data() + n, std::min(rows, cols), std::max(rows, cols),
                                kernels::kMuonSteps);
    kernels::muon_apply(p.data(), scratch.data(), rows, cols, 0.02f, 0.1f);
    FVec ms = m0, gs = g0;
    kernels::muon_update_split(hi.data(), lo.data(), ms.data(), gs.data(), scratch.data(), rows, cols, 0.02f,
                               0.95f, 0.1f, 0.7f);
    CHECK(same_bits(m, ms));
    CHECK(same_bits(g, gs));
    check_planes_hold(hi, lo, p);
  }
}
