// Which architecture of the outside world computes exactly what a tapegpt
// model computes: the choice GGUF and Hugging Face export share.
//
// Note [Export families]: tapegpt's model options mix freely; llama.cpp and
// Hugging Face each run a few fixed mixes. Two of ours are theirs exactly:
//   GPT-2 family: --norm layernorm --mlp gelu with learned or sinusoidal
//     positions (the sinusoidal table is written as the learned one, which
//     computes the same sum); biases or not (absent ones written as zeros,
//     which add nothing); tied or untied head. llama.cpp's `gpt2` computes
//     GELU's tanh form only, so GGUF also needs --gelu tanh; Hugging Face's
//     GPT-2 has both (gelu_new, gelu).
//   Llama family: --norm rmsnorm --mlp swiglu --pos-encoding rope, with or
//     without linear biases (both runtimes take them as optional tensors).
//   GPT-NeoX family (GGUF only): --norm layernorm --mlp gelu --pos-encoding
//     rope is llama.cpp's `gptneox` with use_parallel_residual false, whose
//     RoPE rotates rotate_half pairs as ours does; --gelu tanh as for gpt2.
//     Hugging Face export refuses it (not written or checked yet).
// Anything else (ReLU², RMSNorm with a GELU MLP, SwiGLU with LayerNorm, ...)
// is refused, naming the options that differ from the nearest family, and
// no file is written.
#pragma once

#include <string>

#include "nn/config.h"
#include "nn/params.h"

namespace checkpoints {

enum class ExportFamily { Gpt2, Llama, NeoX };

struct FamilyChoice {
  ExportFamily family = ExportFamily::Gpt2;
  std::string refusal;  // "" when the model is of `family`; else one sentence
};

FamilyChoice export_family(const nn::GPTConfig& config);

// The float32 values of the parameter `name`, or null when the model has no
// such tensor (a bias of a model without biases, wpe with RoPE). The store
// must hold joined float32 parameters (as load_checkpoint returns them).
const float* export_param(const nn::ParameterStore& store, const std::string& name);

}  // namespace checkpoints
