// GPTConfig: the hyper-parameters that fix a GPT's shape, and their checks.
#pragma once

#include <cstdint>
#include <string>

#include "autograd/kernels/kernels.h"

namespace nn {

enum class PosEncoding { Learned, Sinusoidal };

struct GPTConfig {
  int64_t vocab_size = 65;
  int64_t block_size = 64;   // maximum context length T
  int64_t n_layer = 4;
  int64_t n_head = 4;
  int64_t n_embd = 128;
  bool bias = true;          // biases in every linear layer and LayerNorm
  bool tied = true;          // lm_head shares transformer.wte.weight
  float dropout = 0.0f;
  PosEncoding pos_encoding = PosEncoding::Learned;
  // GPT-2's tanh approximation by default; erf is PyTorch's nn.GELU(), the
  // one nanoGPT's current model uses. Saved in the checkpoint's /config.
  kernels::GeluKind gelu = kernels::GeluKind::Tanh;

  int64_t head_size() const { return n_embd / n_head; }
};

// Empty when the config is usable, else one sentence naming the bad field and
// how to fix it (for the user, not an internal check).
std::string config_error(const GPTConfig& config);

const char* pos_encoding_name(PosEncoding p);
// Parses "learned" / "sinusoidal"; false on anything else.
bool pos_encoding_parse(const std::string& name, PosEncoding* out);

const char* gelu_name(kernels::GeluKind g);
// Parses "tanh" / "erf"; false on anything else.
bool gelu_parse(const std::string& name, kernels::GeluKind* out);

}  // namespace nn
