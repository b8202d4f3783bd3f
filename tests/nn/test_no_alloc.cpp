// After the first training step, a step makes no heap allocation: the arena,
// the tape and the batch buffers keep their capacity. The step tested is the
// trainer's own (train/train_step.h): sampler over a token file, K
// micro-batches with dropout, backward, clip, AdamW or Muon. Every way to allocate is
// counted — operator new, and (outside AddressSanitizer, whose runtime owns
// them) malloc, calloc, realloc, aligned_alloc, memalign and posix_memalign —
// by replacing them for this test executable.
//
// Note [OpenMP's own allocations]: GCC's OpenMP runtime allocates (and
// frees) a team descriptor for every parallel region that runs on one
// thread — a `parallel for if (...)` whose condition is false, or any region
// with one thread — and caches the descriptor only for larger teams
// (libgomp's team.c). Those come from libgomp itself, cost a small-block
// malloc each, and are counted apart: the test requires none from anywhere
// else, and reports theirs.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include "autograd/kernels/bf16.h"
#include "data/token_file.h"
#include "model_fixture.h"
#include "support/no_skip.h"
#include "train/precision.h"
#include "train/token_batches.h"
#include "train/train_step.h"

namespace {
std::atomic<int64_t> g_allocations{0};          // all but OpenMP's own
std::atomic<int64_t> g_openmp_allocations{0};   // Note [OpenMP's own allocations]
std::atomic<int64_t> g_dnnl_allocations{0};     // Note [bf16 matmuls] in bf16.h

// `caller` is the return address of the allocation function: its code's
// library tells libgomp's and oneDNN's allocations from everyone else's.
void count_allocation(const void* caller) {
  Dl_info info;
  const bool named = dladdr(caller, &info) && info.dli_fname;
  if (named && std::strstr(info.dli_fname, "libgomp"))
    g_openmp_allocations.fetch_add(1, std::memory_order_relaxed);
  else if (named && std::strstr(info.dli_fname, "libdnnl"))
    g_dnnl_allocations.fetch_add(1, std::memory_order_relaxed);
  else
    g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

#define COUNT_ALLOCATION() count_allocation(__builtin_return_address(0))

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCountsMalloc = false;
#else
constexpr bool kCountsMalloc = true;
// glibc's own allocator under its exported internal names: every replacement
// below counts, then forwards, so free() (not replaced) matches them all.
extern "C" {
void* __libc_malloc(size_t n);
void* __libc_calloc(size_t n, size_t size);
void* __libc_realloc(void* p, size_t n);
void* __libc_memalign(size_t alignment, size_t n);

void* malloc(size_t n) noexcept {
  COUNT_ALLOCATION();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t size) noexcept {
  COUNT_ALLOCATION();
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) noexcept {
  COUNT_ALLOCATION();
  return __libc_realloc(p, n);
}
void* aligned_alloc(size_t alignment, size_t n) noexcept {
  COUNT_ALLOCATION();
  return __libc_memalign(alignment, n);
}
void* memalign(size_t alignment, size_t n) noexcept {
  COUNT_ALLOCATION();
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, size_t alignment, size_t n) noexcept {
  COUNT_ALLOCATION();
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* p = __libc_memalign(alignment, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
}  // extern "C"
#endif

// Neither news nor deletes are inlined: GCC would otherwise see malloc's
// pointer reach delete[], or operator new's reach free(), and warn
// (-Wmismatched-new-delete, at -O2 with sanitizers), though here new is malloc.
// Each counts itself: COUNT_ALLOCATION names its own caller, which one new
// calling another would hide.
[[gnu::noinline]] void* operator new(std::size_t n) {
  COUNT_ALLOCATION();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new[](std::size_t n) {
  COUNT_ALLOCATION();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  COUNT_ALLOCATION();
  return std::malloc(n ? n : 1);
}
[[gnu::noinline]] void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  COUNT_ALLOCATION();
  return std::malloc(n ? n : 1);
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

// Keeps each allocation observable, so the compiler cannot drop it.
void* volatile g_sink = nullptr;

// True when `allocate` (which frees what it allocates) moved the counter.
template <class F>
bool counted(F allocate) {
  const int64_t before = g_allocations.load();
  allocate();
  return g_allocations.load() > before;
}

// A directory of its own under the system's temporary one, removed at the end.
struct TempDir {
  std::string path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tapegpt_no_alloc_XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

// The same fixed batch every micro-batch.
class FixedBatch : public train::BatchSource {
 public:
  explicit FixedBatch(const testing::Batch& b) : b_(b) {}
  void fill(int32_t* inputs, int32_t* targets, tg::Rng&) override {
    std::copy(b_.inputs.begin(), b_.inputs.end(), inputs);
    std::copy(b_.targets.begin(), b_.targets.end(), targets);
  }

 private:
  const testing::Batch& b_;
};

}  // namespace

TEST_CASE("the allocation counter counts every way to allocate", "[alloc]") {
  CHECK(counted([] { int* p = new int(1); g_sink = p; delete p; }));
  CHECK(counted([] { int* p = new int[4]; g_sink = p; delete[] p; }));
  if (!kCountsMalloc) return;  // AddressSanitizer: operator new only
  CHECK(counted([] { g_sink = std::malloc(16); std::free(g_sink); }));
  CHECK(counted([] { g_sink = std::calloc(4, 4); std::free(g_sink); }));
  CHECK(counted([] { g_sink = std::realloc(nullptr, 16); std::free(g_sink); }));
  CHECK(counted([] { g_sink = std::aligned_alloc(64, 64); std::free(g_sink); }));
  CHECK(counted([] {
    void* p = nullptr;
    REQUIRE(posix_memalign(&p, 64, 64) == 0);
    g_sink = p;
    std::free(p);
  }));
}

TEST_CASE("a training step allocates nothing after the first", "[alloc]") {
  for (const char* sampler : {"random", "sequential"})
  for (const bool with_muon : {false, true})  // Muon's scratch is allocated with it, once
  for (const bool bf16 : {false, true}) {  // oneDNN's own allocations counted apart (Note [bf16 matmuls])
    INFO("sampler " << sampler << (with_muon ? ", Muon" : ", AdamW") << (bf16 ? ", bf16" : ", fp32"));
    if (bf16 && !kernels::bf16_matmul_available()) {
      if (test_support::no_skip()) FAIL("oneDNN has no bf16 matmul here, under TAPEGPT_NO_SKIP=1");
      WARN("oneDNN has no bf16 matmul here: the bf16 step is not counted");
      continue;
    }
    nn::GPTConfig c = testing::tiny_config();
    c.dropout = 0.1f;
    nn::GPT m = nn::gpt_create(c);
    nn::gpt_init(m, 1);
    if (bf16) nn::set_precision(m.store, train::Precision::Bf16);
    TempDir dir;
    const std::string path = dir.path + "/train.bin";
    std::vector<int32_t> tokens(500);
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>((i * 7 + i / 5) % 11);
    data::token_file_write(path, tokens.data(), static_cast<int64_t>(tokens.size()), c.vocab_size);
    const data::TokenFile file(path);
    const int64_t B = 4, K = 2;
    train::TokenFileBatches batches(file, sampler, B, c.block_size, 0);
    train::TrainStep step(m, train::StepShape{B, c.block_size, K});
    train::Muon muon(m.store, train::MuonConfig{}, 0.02);
    if (with_muon) step.set_muon(&muon);
    tg::Rng rng(5);
    int64_t step_number = 0;
    auto run = [&] { return step.run(batches, rng, train::AdamWConfig{}, 1e-3f, ++step_number).applied; };
    REQUIRE(run());
    REQUIRE(run());
    const int64_t before = g_allocations.load(), openmp_before = g_openmp_allocations.load(),
                  dnnl_before = g_dnnl_allocations.load();
    bool applied = true;
    for (int i = 0; i < 3; ++i) applied = run() && applied;
    const int64_t allocations = g_allocations.load() - before;
    const int64_t openmp = g_openmp_allocations.load() - openmp_before;
    CHECK(applied);
    CHECK(allocations == 0);
    WARN("three steps: " << openmp << " allocations by the OpenMP runtime (Note [OpenMP's own allocations])"
                         << (bf16 ? ", " + std::to_string(g_dnnl_allocations.load() - dnnl_before) +
                                        " inside oneDNN itself"
                                  : std::string()));
  }
}

TEST_CASE("the memory plan sizes the arena of a training step", "[alloc]") {
  for (float dropout : {0.0f, 0.1f}) {
    nn::GPTConfig c = testing::tiny_config();
    c.dropout = dropout;
    nn::GPT m = nn::gpt_create(c);
    nn::gpt_init(m, 1);
    const testing::Batch b = testing::tiny_batch(3, c.block_size, c.vocab_size);
    FixedBatch batch(b);
    train::TrainStep step(m, train::StepShape{b.B, b.T, 1});
    tg::Rng rng(5);
    step.run(batch, rng, train::AdamWConfig{}, 1e-3f, 1);
    CHECK(step.arena().heap_allocations() == 1);  // the planned block sufficed
    CHECK(step.arena().peak_floats() == step.plan().total_floats);  // and is all the step asked for
    CHECK(step.plan().total_floats < step.plan().unplanned_floats);  // buffers share floats
  }
}

// The bf16 matmuls keep their oneDNN primitives and memory objects per shape
// and thread, and one scratchpad per thread (Note [bf16 matmuls]): after the first
// call of a shape, none of our code allocates. oneDNN itself allocates
// inside each execution; those are counted apart and reported.
TEST_CASE("bf16 matmuls allocate nothing of ours after the first call of a shape", "[alloc][bf16]") {
  if (!kernels::bf16_matmul_available()) {
    if (test_support::no_skip()) FAIL("built without oneDNN (libdnnl-dev), under TAPEGPT_NO_SKIP=1");
    WARN("built without oneDNN: skipped");
    return;
  }
  const int64_t N = 200, IC = 250, OC = 240;  // cut into pieces, run on every thread
  std::vector<float> x(N * IC, 0.5f), w(OC * IC, 0.25f), dout(N * OC, 0.125f);
  std::vector<float> out(N * OC), dinp(N * IC), dw(OC * IC), bias(OC, 1.0f);
  std::vector<uint16_t> bx(N * IC), bw(OC * IC), bdout(N * OC);
  kernels::round_to_bf16(bw.data(), w.data(), OC * IC);
  kernels::round_to_bf16(bdout.data(), dout.data(), N * OC);
  auto run = [&] {
    kernels::round_to_bf16(bx.data(), x.data(), N * IC);
    kernels::linear_forward_bf16(out.data(), bx.data(), bw.data(), bias.data(), N, IC, OC);
    kernels::linear_backward_bf16(dinp.data(), dw.data(), bdout.data(), bx.data(), bw.data(), N, IC, OC);
  };
  for (int i = 0; i < 2; ++i) run();  // every thread makes the primitives of its pieces
  const int64_t before = g_allocations.load(), dnnl_before = g_dnnl_allocations.load();
  for (int i = 0; i < 3; ++i) run();
  CHECK(g_allocations.load() - before == 0);
  WARN("three bf16 forward + backward calls: " << g_dnnl_allocations.load() - dnnl_before
                                               << " allocations inside oneDNN itself");
}
