// The arena's reuse promise and the tape's bookkeeping.
#include <catch2/catch.hpp>

#include <string>

#include "autograd/ops.h"

using autograd::Arena;

TEST_CASE("arena consolidates after the first step and then stops allocating", "[arena]") {
  Arena arena;
  auto step = [&] {
    for (int i = 0; i < 5; ++i) arena.alloc(700000);  // 5 × 2.8 MB: several blocks at first
    arena.reset();
  };
  step();
  const int64_t after_first = arena.heap_allocations();
  CHECK(after_first > 1);
  for (int i = 0; i < 3; ++i) step();
  CHECK(arena.heap_allocations() == after_first);
  CHECK(arena.capacity_floats() >= arena.peak_floats());
}

TEST_CASE("arena pointers are 64-byte aligned and disjoint", "[arena]") {
  Arena arena;
  float* a = arena.alloc(3);
  float* b = arena.alloc(5);
  CHECK(reinterpret_cast<uintptr_t>(a) % 64 == 0);
  CHECK(reinterpret_cast<uintptr_t>(b) % 64 == 0);
  CHECK(b >= a + 3);
}

TEST_CASE("ops record nothing without a tape or when no input needs a gradient", "[tape]") {
  Arena arena;
  autograd::Tape tape;
  std::vector<float> x(6, 1.0f), gx(6, 0.0f);
  autograd::Tensor with_grad = autograd::tensor_view(x.data(), gx.data(), {2, 3});
  autograd::Tensor no_grad = autograd::tensor_view(x.data(), nullptr, {2, 3});
  autograd::OpContext infer{&arena, nullptr}, train{&arena, &tape};
  autograd::Tensor y = autograd::gelu(infer, with_grad);
  CHECK(!y.needs_grad());
  autograd::gelu(train, no_grad);
  CHECK(tape.size() == 0);
  autograd::gelu(train, with_grad);
  REQUIRE(tape.size() == 1);
  CHECK(std::string(tape.op_name(0)) == "gelu");
}
