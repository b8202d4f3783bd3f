// Validation and naming for GPTConfig.
#include "nn/config.h"

namespace nn {

std::string config_error(const GPTConfig& c) {
  // Bounds keep every size product far inside int64 and int32 token ids.
  if (c.vocab_size < 1 || c.vocab_size > (int64_t{1} << 24))
    return "vocab_size must be between 1 and 16777216";
  if (c.block_size < 1 || c.block_size > 65536) return "block_size must be between 1 and 65536";
  if (c.n_layer < 1 || c.n_layer > 1024) return "n_layer must be between 1 and 1024";
  if (c.n_head < 1 || c.n_head > 1024) return "n_head must be between 1 and 1024";
  if (c.n_embd < 1 || c.n_embd > 65536) return "n_embd must be between 1 and 65536";
  if (c.n_embd % c.n_head != 0)
    return "n_embd (" + std::to_string(c.n_embd) + ") must be divisible by n_head (" +
           std::to_string(c.n_head) + "): pick an n_embd that is a multiple of n_head";
  if (c.pos_encoding == PosEncoding::Sinusoidal && c.n_embd % 2 != 0)
    return "sinusoidal positions need an even n_embd";
  if (!(c.dropout >= 0.0f && c.dropout < 1.0f)) return "dropout must be in [0, 1)";
  return "";
}

const char* pos_encoding_name(PosEncoding p) {
  return p == PosEncoding::Learned ? "learned" : "sinusoidal";
}

bool pos_encoding_parse(const std::string& name, PosEncoding* out) {
  if (name == "learned") { *out = PosEncoding::Learned; return true; }
  if (name == "sinusoidal") { *out = PosEncoding::Sinusoidal; return true; }
  return false;
}

const char* gelu_name(kernels::GeluKind g) { return g == kernels::GeluKind::Erf ? "erf" : "tanh"; }

bool gelu_parse(const std::string& name, kernels::GeluKind* out) {
  if (name == "tanh") { *out = kernels::GeluKind::Tanh; return true; }
  if (name == "erf") { *out = kernels::GeluKind::Erf; return true; }
  return false;
}

}  // namespace nn
