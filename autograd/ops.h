// autograd: reverse-mode differentiation for tapegpt, the header users include.
//
// What lives where:
//   base/        foundations any folder may use (errors, TG_CHECK, RNG,
//                atomic files): its own library, depending on nothing here
//   kernels/     plain forward/backward kernels over float pointers (its own
//                library; knows nothing of the tape) and reference.cpp, the
//                naive double-precision oracle used by tests
//   tensor.h     Tensor: a non-owning view (data, grad, shape)
//   precision.h  RunPrecision: the run's precision, which every op reads
//                from its context (Note [Run precision])
//   buffer.h     FloatBuffer: owned, aligned float storage
//   arena.h      Arena: one step's activations, reset each step
//   tape.h       Tape: op entries in execution order, one reverse loop
//                (Note [Tape entries]); where buffers live (Note [Tape modes])
//   planner.h    the memory planner: a liveness pass over a recorded step
//                places every buffer in one arena block (Note [Memory planner])
//   ops/<op>.cpp one file per op: its forward (declared below), its record
//                and its backward; the only code that knows both the tape
//                and the kernels. Each file names its gradient check, a
//                section of tests/autograd/test_ops_gradcheck.cpp tagged
//                with the op's name (e.g. `test_autograd "[linear]"`).
//
// Adding an op, and every file it touches:
//   1. its kernels in kernels/ (a forward/backward pair declared in
//      kernels/kernels.h, defined in kernels/<op>.cpp, which CMake's glob
//      finds), each checked against a double version in
//      kernels/reference.{h,cpp} by a test in tests/autograd/ (e.g.
//      test_block_option_kernels.cpp: finite differences of the reference,
//      the float kernel within bounds derived from float rounding);
//   2. autograd/ops/<op>.cpp (found by CMake's glob): a plain record whose
//      forward() and backward() call the kernels (Note [Tape entries] in
//      tape.h; kRecomputable if running it again beats keeping its output),
//      and the op function, which takes its output from new_output (and any
//      saved buffer or scratch from new_saved, new_scratch,
//      new_backward_scratch) and hands the record to run_op with what it
//      reads and what its backward reads, by name (op_support.h):
//        run_op(ctx, RMSNormRecord{...}, record, out, EntryUses{&x, &weight}.saves(x, weight));
//      the memory planner needs nothing else. Never place one buffer inside
//      another in the op: ask for the reuse by meaning (tape.h's Reuse) and
//      let the planner decide (Note [Buffer reuse] in planner.h); the op
//      must give the same bits whether it is granted or not;
//   3. its declaration below;
//   4. a gradient check in tests/autograd/test_ops_gradcheck.cpp tagged [<op>].
// As a model option (nn/README.md): a row of Note [Model choices] in
// nn/config.h and its field (an enum, a bool for a switch such as
// --qk-norm, or a number from a short list such as --logit-softcap) in
// config.{h,cpp}: the flags, checkpoints, inspect, params and
// export's refusal follow the row; one line in nn/gpt.cpp's gpt_forward
// (training, eval and KV-cache decoding all run it); the parameter table
// nn/params.cpp if the tensors change; the PyTorch model
// scripts/nanogpt_model.py with a case in scripts/torch_parity.py's
// OPTION_CONFIGS and tests/parity/CMakeLists.txt, and the decoder test's
// option list (tests/nn/test_decode.cpp); scripts/h5_to_nanogpt.py's
// NANOGPT_CHOICES if nanoGPT's model lacks it. Export refuses it by itself.
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
#include "autograd/precision.h"
#include "autograd/tape.h"
#include "autograd/tensor.h"

namespace autograd {

// Note [Gradient over data]
// An op that needs nothing of its input in backward but what it wrote there
// itself may offer to write the input's gradient over the input's data:
// cross_entropy writes the probabilities over the logits in its forward and,
// in backward, their gradient over the probabilities, so the largest
// activation of a step is held once. An elementwise op whose backward reads
// each input element only to compute that element's gradient may offer the
// same (softcap: the raw logits' gradient over the raw logits). It only asks
// (EntryUses::may_write_grad_over_data, Reuse::OverData); the planner grants
// it where the op is the input's one consumer and nothing else reads the
// data after (Note [Buffer reuse] in planner.h), and then gives the gradient
// no floats of its own. Where it is refused, and on an eager tape, the
// gradient has its own zeroed buffer, which the op adds into instead (the
// kernel tells the two apart by the pointers): the same bits.

// Each op records (when a tape is given and some input needs a gradient) so
// that backward adds into the inputs' gradients; Note [No hidden modes].
// Where the output, its gradient and anything saved live is the tape's
// business (Note [Tape modes] in tape.h): the call site never says.
// The run's precision comes in the context too (Note [Run precision]):
// float32 unless the caller passes another.
struct OpContext {
  Arena* arena = nullptr;  // untaped outputs; taped ones on an eager tape
  Tape* tape = nullptr;    // null: inference, nothing is recorded
  RunPrecision precision;

  OpContext() = default;
  OpContext(Arena* a, Tape* t, const RunPrecision& p = RunPrecision{}) : arena(a), tape(t), precision(p) {}
};

// Marks the entries recorded during its life as one part of one block of
// the model (TapeBlock in tape.h), for whoever needs to know where the
// part's parameters are last read in backward (the MPI gradient buckets).
// Nothing without a tape.
class BlockMark {
 public:
  BlockMark(const OpContext& ctx, int64_t layer, int part = 0) : tape_(ctx.tape) {
    if (tape_) tape_->begin_block(layer, part);
  }
  ~BlockMark() {
    if (tape_) tape_->end_block();
  }
  BlockMark(const BlockMark&) = delete;
  BlockMark& operator=(const BlockMark&) = delete;

 private:
  Tape* tape_;
};

// ops/embedding.cpp — ids[B,T] → [B,T,C]: wte[V,C] rows plus wpe[T',C] rows
// pos0…pos0+T-1 (pos0 + T ≤ T'); wpe may be undefined (no position table:
// RoPE).
Tensor embedding(const OpContext& ctx, const int32_t* ids, int64_t B, int64_t T, const Tensor& wte,
                 const Tensor& wpe, int64_t pos0 = 0);
// ops/add.cpp — a + b, same number of elements.
Tensor add(const OpContext& ctx, const Tensor& a, const Tensor& b);
// ops/linear.cpp — x[…, IC] · weight[OC, IC]ᵀ + bias[OC]; bias may be an
// undefined Tensor.
Tensor linear(const OpContext& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias);
// ops/layernorm.cpp — over the last dimension; bias may be undefined.
// Recomputable (the planner may run it again in backward instead of keeping
// its output).
Tensor layernorm(const OpContext& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias);
// ops/gelu.cpp — recomputable, as layernorm.
Tensor gelu(const OpContext& ctx, const Tensor& x,
            kernels::GeluKind kind = kernels::GeluKind::Tanh);
// ops/rmsnorm.cpp — x·rstd·weight over the last dimension, no bias;
// recomputable, as layernorm.
Tensor rmsnorm(const OpContext& ctx, const Tensor& x, const Tensor& weight);
// ops/relu2.cpp — max(x, 0)²; recomputable.
Tensor relu2(const OpContext& ctx, const Tensor& x);
// ops/swiglu.cpp — x[…, 2H] = [gate | value] → silu(gate)·value [… , H];
// recomputable.
Tensor swiglu(const OpContext& ctx, const Tensor& x);
// ops/rope.cpp — qkv[B,T,3C] with q and k of each head rotated by positions
// pos0…pos0+T-1 (kernels.h's RoPE), v unchanged.
Tensor rope(const OpContext& ctx, const Tensor& qkv, int64_t n_head, int64_t pos0 = 0);
// ops/qk_norm.cpp — qkv[…,3C] with q and k of each head RMS-normed (no gain),
// v unchanged; recomputable.
Tensor qk_norm(const OpContext& ctx, const Tensor& qkv, int64_t n_head);
// ops/attention.cpp — causal self-attention, qkv[B,T,3C] → [B,T,C], with the
// blockwise kernel (memory linear in T; the naive T×T kernel,
// kernels/attention_naive.h, is its test oracle and benchmark). With a tape and dropout_p > 0
// the attention probabilities are dropped (Note [Attention dropout]) with
// this seed. If probs is not null it receives the attention probabilities
// [B,NH,T,T] the forward used (rows = queries, exactly 0 above the
// diagonal), for looking at; only inference (no tape, so no dropout) asks
// for them.
Tensor attention(const OpContext& ctx, const Tensor& qkv, int64_t n_head, float dropout_p = 0.0f,
                 uint64_t seed = 0, float* probs = nullptr);
// One layer's KV cache as attention's cached mode reads it: key and value
// rows [capacity, C] each, of which 0…pos0-1 hold earlier positions
// (nn/kv_cache.h owns them; Note [KV-cache forward] in nn/gpt.cpp).
struct LayerCache {
  float* k = nullptr;
  float* v = nullptr;
  int64_t capacity = 0;
  int64_t pos0 = 0;
};
// ops/attention.cpp, cached mode — inference only (no tape): qkv[1,T,3C]
// holds positions pos0…pos0+T-1. Their k and v are written to cache rows
// pos0…pos0+T-1 (v rounded to bf16 where the plain op rounds it), then each
// query attends over cache rows 0 up to its own position: [1,T,C], the rows
// the plain op gives over the whole sequence (from position 0, with T > 1,
// it runs the plain op: the same bits; else attention_decode row by row).
Tensor attention(const OpContext& ctx, const Tensor& qkv, int64_t n_head, const LayerCache& cache);
// ops/dropout.cpp — identity without a tape or when p == 0.
Tensor dropout(const OpContext& ctx, const Tensor& x, float p, uint64_t seed);
// ops/softcap.cpp — cap·tanh(x/cap), the logits squashed into (-cap, cap)
// before the loss; x's gradient may be written over x (Note [Gradient over
// data]).
Tensor softcap(const OpContext& ctx, const Tensor& x, float cap);
// ops/cross_entropy.cpp — logits[N,V] (any leading shape) → [1], the mean of
// -log softmax(logits)[target]. If losses is not null it receives the N
// per-row losses.
// The op takes the logits over (hence Tensor&&: call it with
// std::move(logits)): their storage receives softmax(logits), which backward
// needs, so the largest activation of a step is not held twice. Copy the
// logits first if you need them afterwards. Backward writes their gradient
// over the probabilities where the planner grants it (Note [Gradient over
// data]).
Tensor cross_entropy(const OpContext& ctx, Tensor&& logits, const int32_t* targets,
                     float* losses = nullptr);

}  // namespace autograd
