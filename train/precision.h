// Which precision a run's matmuls use (--precision fp32|bf16|auto), and
// why: the one place the choice is made (Note [bf16 linear] in
// autograd/ops/linear.cpp; Note [bf16 matmuls] in autograd/kernels/bf16.h).
#pragma once

#include <string>

#include "nn/gpt.h"
#include "train/options.h"

namespace train {

struct PrecisionChoice {
  nn::Precision precision = nn::Precision::Fp32;
  std::string reason;  // for the train header and the bench line, e.g. "auto: no AMX-BF16 on this CPU"
};

// "fp32", "bf16" or "auto". auto picks bf16 only where AMX-BF16 is usable
// (kernels::amx_bf16_usable: the CPU has it, the kernel permits its tiles,
// oneDNN dispatches to it), fp32 elsewhere. bf16 asked for where oneDNN has
// no bf16 matmul (a build without it, a CPU below AVX-512) is a UsageError;
// where it runs without AMX, the reason says how much slower to expect.
// `asked` names where an explicit fp32 or bf16 came from, for the reason.
PrecisionChoice choose_precision(const std::string& requested, const std::string& asked = "asked for");

// Resolves o->precision ("auto" included) to "fp32" or "bf16" and sets
// o->precision_reason: what a run saves and runs in.
void resolve_precision(TrainOptions* o, const std::string& asked = "asked for");

// The precision a checkpoint's saved flag names ("fp32" or "bf16"); a file
// from before precisions were saved was trained in fp32.
nn::Precision precision_of_saved(const std::string& saved);

}  // namespace train
