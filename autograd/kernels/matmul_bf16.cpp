// The linear layer's matmuls with bf16 operands through oneDNN, and oneDNN's
// run-time facts (Note [bf16 matmuls] in bf16.h).
#include <omp.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "autograd/base/check.h"
#include "autograd/kernels/bf16.h"

#ifdef TAPEGPT_HAVE_DNNL
#include <dnnl.hpp>
#endif

namespace kernels {

#ifdef TAPEGPT_HAVE_DNNL

namespace {

// Holds OpenMP's thread count at 1 for the calling thread (inside a parallel
// region: for its own nested regions only) while oneDNN makes or runs a
// primitive, so oneDNN both plans the blocking for one thread and runs on one.
class OneThread {
 public:
  OneThread() : restore_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OneThread() { omp_set_num_threads(restore_); }
  OneThread(const OneThread&) = delete;
  OneThread& operator=(const OneThread&) = delete;

 private:
  int restore_;
};

// One piece's product, C[M,N] = op(A)[M,K]·op(B)[K,N] (+ bias[N]) (+ C when
// accumulating): A and B bf16 and row-major with leading dimensions lda and
// ldb (op = transpose when ta / tb), C float32 with ldc.
struct GemmShape {
  bool ta, tb;
  int64_t M, N, K, lda, ldb, ldc;
  bool bias, accumulate;
  bool operator==(const GemmShape& o) const {
    return ta == o.ta && tb == o.tb && M == o.M && N == o.N && K == o.K && lda == o.lda && ldb == o.ldb &&
           ldc == o.ldc && bias == o.bias && accumulate == o.accumulate;
  }
};

// A made primitive with its memory objects (pointed at each call's buffers,
// the scratchpad at its thread's), and the argument list handed to oneDNN's
// C API.
struct Gemm {
  GemmShape shape;
  dnnl::matmul prim;
  dnnl::memory a, b, c, bias, scratchpad;
  dnnl_exec_arg_t args[5];
  int nargs = 0;
};

// One per OpenMP thread (thread_local): no locks, and each thread's
// scratchpad is its own, so pieces run concurrently. A thread runs one
// primitive at a time, so its primitives share one scratchpad, as large as
// the largest asks: on a step's dozens of piece shapes that is the largest
// piece's, not their sum (brgemm's, where oneDNN picks it, is a copy of the
// piece's B blocks).
struct ThreadGemms {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::vector<std::unique_ptr<Gemm>> made;
  std::vector<unsigned char> scratchpad;  // grown when a primitive is made

  // The scratchpad's start, 64-byte aligned as oneDNN wants it.
  void* scratchpad_start() {
    void* p = scratchpad.data();
    size_t room = scratchpad.size();
    return std::align(64, 1, p, room);
  }
};

// The implementations oneDNN chose for the primitives made so far, one set
// for the pieces (bf16_matmul_kernels) and one for the whole calls
// (bf16_whole_call_kernels): filled when a primitive is made, which is rare.
struct KernelNames {
  std::mutex mutex;
  std::set<std::string> names;

  void add(const std::string& name) {
    const std::lock_guard<std::mutex> lock(mutex);
    names.insert(name);
  }
  std::vector<std::string> list() {
    const std::lock_guard<std::mutex> lock(mutex);
    return {names.begin(), names.end()};
  }
};
KernelNames piece_kernels, whole_call_kernels;

dnnl::memory::dims strides_of(bool transposed, int64_t ld) {
  return transposed ? dnnl::memory::dims{1, ld} : dnnl::memory::dims{ld, 1};
}

Gemm& gemm_for(ThreadGemms& t, const GemmShape& s, KernelNames& kernels_made) {
  for (const auto& g : t.made)
    if (g->shape == s) return *g;
  using dt = dnnl::memory::data_type;
  const dnnl::memory::desc a_md({s.M, s.K}, dt::bf16, strides_of(s.ta, s.lda));
  const dnnl::memory::desc b_md({s.K, s.N}, dt::bf16, strides_of(s.tb, s.ldb));
  const dnnl::memory::desc c_md({s.M, s.N}, dt::f32, dnnl::memory::dims{s.ldc, 1});
  const dnnl::memory::desc bias_md({1, s.N}, dt::f32, dnnl::memory::dims{s.N, 1});
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (s.accumulate) {
    dnnl::post_ops sum;
    sum.append_sum(1.0f);
    attr.set_post_ops(sum);
  }
  const dnnl::matmul::desc desc = s.bias ? dnnl::matmul::desc(a_md, b_md, bias_md, c_md)
                                         : dnnl::matmul::desc(a_md, b_md, c_md);
  const dnnl::matmul::primitive_desc pd(desc, attr, t.engine);
  kernels_made.add(pd.impl_info_str());
  auto g = std::make_unique<Gemm>();
  g->shape = s;
  g->prim = dnnl::matmul(pd);
  g->a = dnnl::memory(a_md, t.engine, nullptr);
  g->b = dnnl::memory(b_md, t.engine, nullptr);
  g->c = dnnl::memory(c_md, t.engine, nullptr);
  g->scratchpad = dnnl::memory(pd.scratchpad_desc(), t.engine, nullptr);  // the thread's, at each call
  t.scratchpad.resize(std::max(t.scratchpad.size(), pd.scratchpad_desc().get_size() + 64));
  g->args[g->nargs++] = {DNNL_ARG_SRC, g->a.get()};
  g->args[g->nargs++] = {DNNL_ARG_WEIGHTS, g->b.get()};
  g->args[g->nargs++] = {DNNL_ARG_DST, g->c.get()};
  g->args[g->nargs++] = {DNNL_ARG_SCRATCHPAD, g->scratchpad.get()};
  if (s.bias) {
    g->bias = dnnl::memory(bias_md, t.engine, nullptr);
    g->args[g->nargs++] = {DNNL_ARG_BIAS, g->bias.get()};
  }
  t.made.push_back(std::move(g));
  return *t.made.back();
}

void execute(ThreadGemms& t, Gemm& g, const uint16_t* A, const uint16_t* B, const float* bias, float* C) {
  const GemmShape& s = g.shape;
  // oneDNN's handles are not const; it only reads A, B and the bias.
  TG_CHECK(dnnl_memory_set_data_handle(g.a.get(), const_cast<uint16_t*>(A)) == dnnl_success);
  TG_CHECK(dnnl_memory_set_data_handle(g.b.get(), const_cast<uint16_t*>(B)) == dnnl_success);
  TG_CHECK(dnnl_memory_set_data_handle(g.c.get(), C) == dnnl_success);
  if (s.bias) TG_CHECK(dnnl_memory_set_data_handle(g.bias.get(), const_cast<float*>(bias)) == dnnl_success);
  TG_CHECK(dnnl_memory_set_data_handle(g.scratchpad.get(), t.scratchpad_start()) == dnnl_success);
  TG_CHECK(dnnl_primitive_execute(g.prim.get(), t.stream.get(), g.nargs, g.args) == dnnl_success);
  TG_CHECK(dnnl_stream_wait(t.stream.get()) == dnnl_success);
}

// One oneDNN call on the calling thread, on one thread.
void gemm_one_thread(const GemmShape& s, const uint16_t* A, const uint16_t* B, const float* bias, float* C) {
  const OneThread one;
  thread_local ThreadGemms t;
  execute(t, gemm_for(t, s, piece_kernels), A, B, bias, C);
}

// One oneDNN call on the whole product, on oneDNN's own threads (as many as
// OpenMP's team): the reference for `tapegpt bench --bf16-rate`.
void gemm_whole(const GemmShape& s, const uint16_t* A, const uint16_t* B, const float* bias, float* C) {
  thread_local ThreadGemms t;
  execute(t, gemm_for(t, s, whole_call_kernels), A, B, bias, C);
}

// Pieces a dimension of `dim` is cut into, as matmul.cpp's sgemm pieces: at
// most 16, each at least 64 wide and about 4 MFLOP of work; the width a
// multiple of 16, so only the last piece is ragged. Functions of the shape
// only (Note [bf16 matmuls]).
int64_t split_pieces(int64_t dim, int64_t work_flops) {
  return std::max<int64_t>(1, std::min<int64_t>({16, dim / 64, work_flops / 4000000}));
}
int64_t piece_width(int64_t dim, int64_t pieces) { return ((dim + pieces - 1) / pieces + 15) / 16 * 16; }

// The whole product of `s`, cut along M or N (the larger) into shape-fixed
// pieces, each one oneDNN call on one thread, run in parallel. A static
// schedule gives each thread the same pieces every call, so after the first
// call every thread has made the primitives it needs.
void gemm_split(const GemmShape& s, const uint16_t* A, const uint16_t* B, const float* bias, float* C) {
  const bool by_rows = s.M >= s.N;
  const int64_t dim = by_rows ? s.M : s.N;
  const int64_t pieces = split_pieces(dim, 2 * s.M * s.N * s.K);
  if (pieces == 1) {
    gemm_one_thread(s, A, B, bias, C);
    return;
  }
  const int64_t width = piece_width(dim, pieces), count = (dim + width - 1) / width;
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < count; ++p) {
    const int64_t start = p * width, w = std::min(width, dim - start);
    GemmShape piece = s;
    if (by_rows) {  // rows start…start+w of C and of op(A)
      piece.M = w;
      gemm_one_thread(piece, s.ta ? A + start : A + start * s.lda, B, bias, C + start * s.ldc);
    } else {  // columns start…start+w of C, of op(B) and of the bias
      piece.N = w;
      gemm_one_thread(piece, A, s.tb ? B + start * s.ldb : B + start, bias ? bias + start : nullptr, C + start);
    }
  }
}

const char* isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::all: return "all";
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_mic: return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
  }
  return "unknown";
}

// The linear layer's three products, each handed to `gemm` (gemm_split for
// training, gemm_whole for bench's reference): one place for their shapes.
using GemmFn = void (*)(const GemmShape&, const uint16_t*, const uint16_t*, const float*, float*);

void linear_forward_with(GemmFn gemm, float* out, const uint16_t* inp, const uint16_t* weight, const float* bias,
                         int64_t N, int64_t IC, int64_t OC) {
  // out[N,OC] = inp[N,IC] · weight[OC,IC]ᵀ (+ bias)
  gemm({false, true, N, OC, IC, IC, IC, OC, bias != nullptr, false}, inp, weight, bias, out);
}

void linear_backward_with(GemmFn gemm, float* dinp, float* dweight, const uint16_t* dout, const uint16_t* inp,
                          const uint16_t* weight, int64_t N, int64_t IC, int64_t OC) {
  // dinp[N,IC] += dout[N,OC] · weight[OC,IC]
  if (dinp) gemm({false, false, N, IC, OC, OC, IC, IC, false, true}, dout, weight, nullptr, dinp);
  // dweight[OC,IC] += dout[N,OC]ᵀ · inp[N,IC]
  if (dweight) gemm({true, false, OC, IC, N, OC, IC, IC, false, true}, dout, inp, nullptr, dweight);
}

}  // namespace

void linear_forward_bf16(float* out, const uint16_t* inp, const uint16_t* weight, const float* bias,
                         int64_t N, int64_t IC, int64_t OC) {
  linear_forward_with(gemm_split, out, inp, weight, bias, N, IC, OC);
}

void linear_backward_bf16(float* dinp, float* dweight, const uint16_t* dout, const uint16_t* inp,
                          const uint16_t* weight, int64_t N, int64_t IC, int64_t OC) {
  linear_backward_with(gemm_split, dinp, dweight, dout, inp, weight, N, IC, OC);
}

void linear_forward_bf16_whole_call(float* out, const uint16_t* inp, const uint16_t* weight, const float* bias,
                                    int64_t N, int64_t IC, int64_t OC) {
  linear_forward_with(gemm_whole, out, inp, weight, bias, N, IC, OC);
}

void linear_backward_bf16_whole_call(float* dinp, float* dweight, const uint16_t* dout, const uint16_t* inp,
                                     const uint16_t* weight, int64_t N, int64_t IC, int64_t OC) {
  linear_backward_with(gemm_whole, dinp, dweight, dout, inp, weight, N, IC, OC);
}

bool bf16_matmul_available() {
  // Asked once: whether oneDNN makes a bf16 matmul here at all (2.6 has
  // none below AVX-512, nor a reference one: "could not create a primitive
  // descriptor iterator" with ONEDNN_MAX_CPU_ISA=AVX2).
  static const bool available = [] {
    try {
      const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
      using dt = dnnl::memory::data_type;
      const dnnl::memory::desc a({1, 1}, dt::bf16, dnnl::memory::dims{1, 1}),
          c({1, 1}, dt::f32, dnnl::memory::dims{1, 1});
      dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, a, c), engine);
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return available;
}

std::string dnnl_version() {
  const dnnl_version_t* v = dnnl::version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

std::string dnnl_effective_isa() { return isa_name(dnnl::get_effective_cpu_isa()); }

std::vector<std::string> bf16_matmul_kernels() { return piece_kernels.list(); }
std::vector<std::string> bf16_whole_call_kernels() { return whole_call_kernels.list(); }

#else  // built without oneDNN: float32 only

void linear_forward_bf16(float*, const uint16_t*, const uint16_t*, const float*, int64_t, int64_t, int64_t) {
  TG_CHECK(!"bf16 matmul called in a build without oneDNN (ask bf16_matmul_available() first)");
}
void linear_backward_bf16(float*, float*, const uint16_t*, const uint16_t*, const uint16_t*, int64_t, int64_t,
                          int64_t) {
  TG_CHECK(!"bf16 matmul called in a build without oneDNN (ask bf16_matmul_available() first)");
}
bool bf16_matmul_available() { return false; }
std::string dnnl_version() { return "none"; }
std::string dnnl_effective_isa() { return "none"; }
void linear_forward_bf16_whole_call(float*, const uint16_t*, const uint16_t*, const float*, int64_t, int64_t,
                                    int64_t) {
  TG_CHECK(!"bf16 matmul called in a build without oneDNN (ask bf16_matmul_available() first)");
}
void linear_backward_bf16_whole_call(float*, float*, const uint16_t*, const uint16_t*, const uint16_t*, int64_t,
                                     int64_t, int64_t) {
  TG_CHECK(!"bf16 matmul called in a build without oneDNN (ask bf16_matmul_available() first)");
}
std::vector<std::string> bf16_matmul_kernels() { return {}; }
std::vector<std::string> bf16_whole_call_kernels() { return {}; }

#endif

void linear_forward_bf16_rounding(float* out, const float* inp, uint16_t* inp_bf16, const uint16_t* weight,
                                  const float* bias, int64_t N, int64_t IC, int64_t OC) {
  round_to_bf16(inp_bf16, inp, N * IC);
  linear_forward_bf16(out, inp_bf16, weight, bias, N, IC, OC);
}

}  // namespace kernels
