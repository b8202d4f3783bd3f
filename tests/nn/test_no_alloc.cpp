// After the first training step, a step makes no heap allocation: the arena
// and the tape keep their capacity. Counted by replacing operator new for
// this test executable.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>

#include "autograd/kernels/kernels.h"
#include "model_fixture.h"

namespace {
std::atomic<int64_t> g_allocations{0};
}

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

TEST_CASE("a training step allocates nothing after the first", "[alloc]") {
  nn::GPTConfig c = testing::tiny_config();
  c.dropout = 0.1f;
  nn::GPT m = nn::gpt_create(c);
  nn::gpt_init(m, 1);
  const testing::Batch b = testing::tiny_batch(4, c.block_size, c.vocab_size);
  autograd::Arena arena;
  autograd::Tape tape;
  int64_t step_number = 0;
  auto step = [&] {
    arena.reset();
    tape.clear();
    autograd::OpContext ctx{&arena, &tape};
    autograd::Tensor logits = nn::gpt_forward(ctx, m, b.inputs.data(), b.B, b.T, 77);
    autograd::Tensor loss = autograd::cross_entropy(ctx, std::move(logits), b.targets.data());
    tape.backward(loss, arena);
    const double norm = std::sqrt(kernels::sum_squares(m.store.grads.data(), m.store.total));
    const float scale = norm > 1.0 ? static_cast<float>(1.0 / (norm + 1e-6)) : 1.0f;
    ++step_number;
    kernels::adamw_update(m.store.params.data(), m.store.m.data(), m.store.v.data(),
                          m.store.grads.data(), m.store.total, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f,
                          step_number, scale);
  };
  step();
  step();
  const int64_t before = g_allocations.load();
  for (int i = 0; i < 3; ++i) step();
  CHECK(g_allocations.load() - before == 0);
}

TEST_CASE("the arena plan covers a training step exactly", "[alloc]") {
  for (float dropout : {0.0f, 0.1f}) {
    nn::GPTConfig c = testing::tiny_config();
    c.dropout = dropout;
    nn::GPT m = nn::gpt_create(c);
    nn::gpt_init(m, 1);
    const testing::Batch b = testing::tiny_batch(3, c.block_size, c.vocab_size);
    const int64_t planned = nn::training_arena_floats(c, b.B);
    autograd::Arena arena(planned);
    autograd::Tape tape;
    autograd::OpContext ctx{&arena, &tape};
    autograd::Tensor logits = nn::gpt_forward(ctx, m, b.inputs.data(), b.B, b.T, 5);
    autograd::Tensor loss = autograd::cross_entropy(ctx, std::move(logits), b.targets.data());
    tape.backward(loss, arena);
    CHECK(arena.heap_allocations() == 1);  // the planned block sufficed
    CHECK(arena.peak_floats() == planned);  // and nothing of it was unused
  }
}
