// autograd: reverse-mode differentiation for tapegpt, the header users include.
//
// What lives where:
//   base/        foundations any folder may use (errors, TG_CHECK, RNG,
//                atomic files): its own library, depending on nothing here
//   kernels/     plain forward/backward kernels over float pointers (its own
//                library; knows nothing of the tape) and reference.cpp, the
//                naive double-precision oracle used by tests
//   tensor.h     Tensor: a non-owning view (data, grad, shape)
//   buffer.h     FloatBuffer: owned, aligned float storage
//   arena.h      Arena: one step's activations, reset each step
//   tape.h       Tape: op records in execution order, one reverse loop
//                (Note [Op records])
//   ops/<op>.cpp one file per op: its forward (declared below), its record
//                and its backward; the only code that knows both the tape
//                and the kernels. Each file names its gradient check, a
//                section of tests/autograd/test_ops_gradcheck.cpp tagged
//                with the op's name (e.g. `test_autograd "[linear]"`).
//
// Adding an op, in four steps:
//   1. its kernels in kernels/ (a forward/backward pair, kernels.h), each
//      checked against a double version in reference.cpp
//      (tests/autograd/test_kernels_vs_reference.cpp);
//   2. autograd/ops/<op>.cpp: the forward, which takes its output from
//      new_output and runs the forward kernel, and records (record_op) a
//      plain struct whose backward() calls the backward kernel;
//   3. its declaration below and the file in autograd/CMakeLists.txt;
//   4. a gradient check in tests/autograd/test_ops_gradcheck.cpp tagged [<op>].
//
// Note [No hidden modes]
// Whether an op records for backward is decided by its arguments alone:
// training passes a tape in the OpContext, inference passes none and runs
// the same kernels. There is no global no-grad switch, no singleton, no
// static RNG: dropout acts only when a tape is present and draws its mask
// from the seed it is given, so a forward's result depends on nothing but
// what the call site shows.
#pragma once

#include <cstdint>

#include "autograd/arena.h"
#include "autograd/kernels/kernels.h"
#include "autograd/tape.h"
#include "autograd/tensor.h"

namespace autograd {

// Note [Gradient liveness]
// Only an activation's data must live across the whole step. Its gradient
// is live in backward only from the backward of its last consumer (the
// first write: gradients accumulate, so the buffer must be zero then) to
// the backward of its producer (the one read). So two activations may share
// gradient storage when every consumer of the earlier one is recorded before
// the later one is produced: the reverse loop then reads (and the tape
// zeroes) the later one's gradient before it first writes the earlier one's.
// Hence an op's output gradient never shares storage with one of its inputs'
// gradients: its backward reads the one while it writes the other.
// The caller, which knows its graph, places each output's gradient
// (GradPlacement): a buffer of its own (the default), a shared buffer, or
// over the output's own data. A shared buffer is handed in zeroed and the
// tape zeroes each output's part right after its producer's backward has
// read it, so it is all zero whenever no gradient is live in it. Over the
// data is for an output whose one consumer takes it over and writes,
// not adds, its gradient there (cross_entropy, which needs nothing of the
// logits in backward but the probabilities it overwrites); other ops refuse
// such an input. Zeroing then accumulating gives the bits a fresh zeroed
// buffer gave, so placement changes memory, never results.
struct GradPlacement {
  enum class Kind { Own, Shared, OverData };
  Kind kind = Kind::Own;
  float* buffer = nullptr;  // Shared: zero, at least the output's size

  static GradPlacement shared(float* buffer) { return {Kind::Shared, buffer}; }
  static GradPlacement over_data() { return {Kind::OverData, nullptr}; }
};

// Note [Scratch activations]
// An output's data normally gets an arena buffer of its own, kept all step,
// because some backward may read it. The caller may place it in a scratch
// buffer instead (OpContext::data), reused by a later output once every
// consumer's forward has run, when no backward reads it (a linear's or a
// dropout's output that only an add consumes) or when it is recomputed
// before the backwards that read it (gelu_recompute, layernorm_recompute:
// recorded after its last consumer, so that the reverse loop meets them
// first). An op whose own backward reads its output (attention) refuses a
// scratch output.

// Each op records (when a tape is given and some input needs a gradient) so
// that backward adds into the inputs' gradients; Note [No hidden modes].
struct OpContext {
  Arena* arena = nullptr;  // where outputs, own gradients and saved buffers live
  Tape* tape = nullptr;    // null: inference, nothing is recorded
  GradPlacement grad;      // where the output's gradient goes (taped only)
  float* data = nullptr;   // not null: the output's data goes here (Note [Scratch activations])

  OpContext() = default;
  OpContext(Arena* a, Tape* t) : arena(a), tape(t) {}

  // This context with the output's gradient placed by g, for one call:
  // `linear(ctx.with_grad(GradPlacement::shared(buf)), x, w, b)`.
  OpContext with_grad(GradPlacement g) const {
    OpContext c = *this;
    c.grad = g;
    return c;
  }
  // This context with the output's data in `scratch`, at least its size.
  OpContext with_data(float* scratch) const {
    OpContext c = *this;
    c.data = scratch;
    return c;
  }
};

// ops/embedding.cpp — ids[B,T] → [B,T,C]: wte[V,C] rows plus wpe[T',C] rows
// 0…T-1 (T ≤ T').
Tensor embedding(const OpContext& ctx, const int32_t* ids, int64_t B, int64_t T, const Tensor& wte,
                 const Tensor& wpe);
// ops/add.cpp — a + b, same number of elements.
Tensor add(const OpContext& ctx, const Tensor& a, const Tensor& b);
// ops/linear.cpp — x[…, IC] · weight[OC, IC]ᵀ + bias[OC]; bias may be an
// undefined Tensor.
Tensor linear(const OpContext& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias);
// ops/layernorm.cpp — over the last dimension; bias may be undefined.
Tensor layernorm(const OpContext& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias);
// ops/gelu.cpp
Tensor gelu(const OpContext& ctx, const Tensor& x,
            kernels::GeluKind kind = kernels::GeluKind::Tanh);
// ops/gelu.cpp — with a tape, records that backward recomputes out = gelu(x)
// (bit for bit: the same kernel on the same input) into out's storage before
// running the backwards of the ops recorded before this call: call it after
// out's last consumer, when out's data is scratch (Note [Scratch
// activations]). Without a tape, nothing.
void gelu_recompute(const OpContext& ctx, const Tensor& out, const Tensor& x,
                    kernels::GeluKind kind = kernels::GeluKind::Tanh);
// ops/layernorm.cpp — as gelu_recompute, for out = layernorm(x, weight, bias).
void layernorm_recompute(const OpContext& ctx, const Tensor& out, const Tensor& x,
                         const Tensor& weight, const Tensor& bias);
// ops/attention.cpp — causal self-attention, qkv[B,T,3C] → [B,T,C], with the
// blockwise kernel (memory linear in T; the naive T×T kernel stays in
// kernels/ as its test oracle and benchmark). With a tape and dropout_p > 0
// the attention probabilities are dropped (Note [Attention dropout]) with
// this seed. If probs is not null it receives the attention probabilities
// [B,NH,T,T] the forward used (rows = queries, exactly 0 above the
// diagonal), for looking at; only inference (no tape, so no dropout) asks
// for them.
Tensor attention(const OpContext& ctx, const Tensor& qkv, int64_t n_head, float dropout_p = 0.0f,
                 uint64_t seed = 0, float* probs = nullptr);
// ops/dropout.cpp — identity without a tape or when p == 0.
Tensor dropout(const OpContext& ctx, const Tensor& x, float p, uint64_t seed);
// ops/cross_entropy.cpp — logits[N,V] (any leading shape) → [1], the mean of
// -log softmax(logits)[target]. If losses is not null it receives the N
// per-row losses.
// The op takes the logits over (hence Tensor&&: call it with
// std::move(logits)): their storage receives softmax(logits), which backward
// needs, so the largest activation of a step is not held twice. Copy the
// logits first if you need them afterwards. Logits whose gradient was placed
// over their data (Note [Gradient liveness]) get it written over the
// probabilities in backward, so they need no gradient buffer either.
Tensor cross_entropy(const OpContext& ctx, Tensor&& logits, const int32_t* targets,
                     float* losses = nullptr);

}  // namespace autograd
