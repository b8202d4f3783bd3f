// Which precision a run's matmuls use (--precision fp32|bf16|auto), and
// why: the one place the choice is made (Note [bf16 linear] in
// autograd/ops/linear.cpp; Note [bf16 matmuls] in autograd/kernels/bf16.h),
// and where a run takes it in (nn::set_precision; Note [Run precision] in
// autograd/precision.h).
#pragma once

#include <cstdint>
#include <string>

#include "nn/params.h"
#include "train/options.h"

namespace train {

// The run's precision is autograd's (Note [Run precision] in
// autograd/precision.h): one type from the parsed flag to the ops.
// nn::set_precision makes it a store's.
using autograd::Precision;
using autograd::precision_name;

struct PrecisionChoice {
  Precision precision = Precision::Fp32;
  // For the train header and the bench line, e.g. "auto: bf16: oneDNN runs
  // avx512_core_bf16 (native bf16) and measured 1.87x float32's matmul speed ...".
  std::string reason;
  double measured_speedup = 0;  // auto's measured bf16 / float32 matmul speed; 0 = not measured
};

// Note [auto precision]
// `--precision auto` (the default) picks bf16 where it pays and float32
// elsewhere (issue 38):
// - bf16 needs oneDNN's bf16 matmul (a build with libdnnl-dev, an AVX-512
//   CPU); where oneDNN would only emulate bf16 (its ISA below
//   avx512_core_bf16: about 0.2× sgemm), auto is float32 without measuring;
// - where oneDNN runs bf16 natively (AVX512_BF16 or AMX-BF16,
//   kernels::bf16_native), a short measurement at the model's width
//   (measure_bf16_speedup, on one thread: hundredths of a second for small
//   models, 0.3-0.5 s at GPT-2 small's width) must show the bf16 matmuls
//   at least kAutoMinSpeedup× float32's, or auto stays float32;
// - ranks of an mpirun job do not measure (each could measure otherwise on a
//   busy machine and the ranks must agree), nor does a sanitizer build
//   (ASan slows tapegpt's loops far more than oneDNN's JIT kernels, so its
//   ratio says nothing): there the ISA alone decides;
// - a command that runs a checkpoint (eval, sample, attention) follows the
//   precision the checkpoint was trained in, so eval reproduces the training
//   log's validation loss (precision_for_checkpoint).
// The choice is saved in the checkpoint; a resume keeps it.
constexpr double kAutoMinSpeedup = 1.1;

// What auto measures for: a step's rows (B·T) and the model's width C.
struct AutoShape {
  int64_t rows = 0;
  int64_t C = 0;
};

// What oneDNN offers here (kernels/bf16.h), as auto's decision reads it.
struct Bf16Backend {
  bool available = false;  // a bf16 matmul at all
  bool native = false;     // in hardware (AVX512_BF16, AMX)
  std::string isa;         // oneDNN's effective ISA, "none" without oneDNN
  static Bf16Backend here();
};

// auto's rule on given facts; `speedup` is the measured bf16/float32 speed
// ratio, or 0 where none was measured (native: bf16 on the ISA alone, for
// the reason `not_measured`).
constexpr const char* kNotMeasuredMpi = "ranks of an mpirun job decide on the ISA alone";
PrecisionChoice decide_auto(const Bf16Backend& backend, double speedup, const AutoShape* shape,
                            const std::string& not_measured = kNotMeasuredMpi);

// "fp32", "bf16" or "auto" (Note [auto precision]). bf16 asked for where
// oneDNN has no bf16 matmul is a UsageError; where it is emulated, the
// reason says how much slower to expect. `asked` names where an explicit
// fp32 or bf16 came from, for the reason. `shape`, where given, is what auto
// measures at; without it (or under mpirun) the ISA alone decides.
PrecisionChoice choose_precision(const std::string& requested, const std::string& asked = "asked for",
                                 const AutoShape* shape = nullptr);

// The same for a command that runs a checkpoint trained in `trained`:
// auto is the checkpoint's own precision (float32 where oneDNN cannot run
// its bf16 here, said in the reason); fp32 and bf16 are as asked.
PrecisionChoice precision_for_checkpoint(const std::string& requested, Precision trained);

// Resolves o->precision ("auto" included, measured at o's model and batch)
// to "fp32" or "bf16" and sets o->precision_reason: what a run saves and
// runs in. Call it once the run's threads are set: auto measures with them.
void resolve_precision(TrainOptions* o, const std::string& asked = "asked for");

// The precision a checkpoint's saved flag names ("fp32" or "bf16"); a file
// from before precisions were saved was trained in fp32.
Precision precision_of_saved(const std::string& saved);

}  // namespace train
