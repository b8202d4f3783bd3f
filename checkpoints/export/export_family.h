// The family table: each architecture of the outside world that computes
// exactly what some tapegpt models compute, one row each, read by every
// writer (GGUF, Hugging Face).
//
// Note [Export families]: tapegpt's model options mix freely; llama.cpp and
// Hugging Face each run a few fixed mixes. A row of kFamilies says which
// model choices a family requires, its name in each format, and how each of
// our parameters maps to each format's tensors (like llama.cpp's
// LLM_TENSOR_NAMES). The rows:
//   GPT-2: --norm layernorm --mlp gelu with learned or sinusoidal positions
//     (the sinusoidal table is written as the learned one, which computes
//     the same sum); biases or not (absent ones written as zeros, which add
//     nothing). llama.cpp's `gpt2` computes GELU's tanh form only, so GGUF
//     also needs --gelu tanh; Hugging Face's GPT-2 has both.
//   Llama: --norm rmsnorm --mlp swiglu --pos-encoding rope, with or without
//     biases (optional tensors in both runtimes).
//   Arcee: --norm rmsnorm --mlp relu2 --pos-encoding rope --no-bias, the
//     --budget recipe: llama.cpp's `arcee` and Hugging Face's Arcee are a
//     Llama whose MLP is down(relu(up(x))²), no gate; llama.cpp's has no
//     bias tensors there, so biases are refused.
//   Qwen3: the Llama mix with --qk-norm and --no-bias. Qwen3 RMS-normalises
//     each head's q and k with a learned gain (eps = rms_norm_eps) before
//     RoPE; ours has no gain and normalises after RoPE. A rotation keeps a
//     head's norm, so with gains of ones the two compute the same, and both
//     runtimes keep the attention scale 1/sqrt(head_dim), as ours. The gains
//     are written as ones. Qwen3's MLP has no biases, so biases are refused.
//   GPT-NeoX (GGUF only): --norm layernorm --mlp gelu --pos-encoding rope is
//     llama.cpp's `gptneox` with use_parallel_residual false, whose RoPE
//     rotates rotate_half pairs as ours does; --gelu tanh as for gpt2.
// Anything else (RMSNorm with a GELU MLP, ReLU² with QK-norm, a logit
// soft-cap, ...) is refused in one line naming the options that keep the
// model out of the nearest family and what would put it in; no file is
// written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/config.h"
#include "nn/params.h"

namespace checkpoints {

// Which rows of one of our parameters an outside tensor holds.
enum class Part : uint8_t {
  All,
  Q, K, V,   // c_attn's thirds (weight rows or bias), q then k then v
  Gate, Up,  // SwiGLU's c_fc halves, gate rows then value rows (Note [SwiGLU rows])
  Ones,      // no parameter of ours: a per-head gain [HS] of ones (Qwen3's q/k norms)
};

// One outside tensor: our parameter ("{L}" stands for a block's index), the
// rows of it, and its names in GGUF and Hugging Face (null: not written in
// that format). A bias row is skipped when the model has no biases, unless
// the family writes absent biases as zeros.
struct TensorName {
  const char* ours;
  Part part;
  const char* gguf;
  const char* hf;
};

enum class Positions : uint8_t { LearnedOrSinusoidal, Rope };
enum class Biases : uint8_t {
  Optional,  // written when the model has them
  Zeros,     // required by the runtime: absent ones written as zeros
  None,      // the runtime has none: a model with biases is refused
};

struct Family {
  const char* name;  // for messages: "GPT-2", "Llama", ...
  // The model choices the family computes (every other choice at its default).
  nn::NormKind norm;
  nn::MlpKind mlp;
  Positions positions;
  bool qk_norm;
  Biases biases;
  struct Gguf {
    const char* arch;      // general.architecture
    bool adjacent_rope;    // llama.cpp rotates pairs (2i, 2i+1): q, k rows reordered (Note [GGUF export])
    bool gelu_tanh_only;   // llama.cpp computes GELU's tanh form only
    bool output_required;  // a tied head is written as output.weight too (token_embd's copy)
    bool parallel_residual_key;  // gptneox: says use_parallel_residual false (ours is sequential)
  } gguf;
  struct Hf {
    const char* arch;        // config.json "architectures"; null: GGUF only
    const char* model_type;
    const char* hidden_act;  // null: GPT-2's activation_function, from --gelu
    bool conv1d;             // block linear weights stored (in, out), as GPT-2's Conv1D
    bool mlp_bias_key;       // config.json has mlp_bias (Llama's, Arcee's; Qwen3's MLP has no biases)
  } hf;
  const std::vector<TensorName>* tensors;
};

const std::vector<Family>& export_families();

struct FamilyChoice {
  const Family* family = nullptr;  // null when refused
  std::string refusal;             // "" when the model is of `family`; else one sentence
};

// The family that computes `config` exactly, or a refusal naming the options
// that keep it out of the nearest family and the choice that would put it in.
FamilyChoice export_family(const nn::GPTConfig& config);

// The float32 values of the parameter `name`, or null when the model has no
// such tensor (a bias of a model without biases, wpe with RoPE). The store
// must hold joined float32 parameters (as load_checkpoint returns them).
const float* export_param(const nn::ParameterStore& store, const std::string& name);

}  // namespace checkpoints
