// GPTConfig: the hyper-parameters that fix a GPT's shape, and their checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/kernels/gelu_kind.h"

namespace nn {

enum class PosEncoding { Learned, Sinusoidal, Rope };
enum class NormKind : uint8_t { LayerNorm, RMSNorm };
// The MLP's activation. Gelu uses GPTConfig::gelu (tanh or erf); Swiglu
// doubles c_fc's rows (gate then value, Note [SwiGLU rows] in params.h).
enum class MlpKind : uint8_t { Gelu, Relu2, Swiglu };

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
  NormKind norm = NormKind::LayerNorm;  // RMSNorm: gains only, no biases
  MlpKind mlp = MlpKind::Gelu;
  // QK-norm (modded-nanoGPT's, nanochat's): each head's q and k RMS-normed,
  // no gain, after RoPE and before attention; no parameters.
  bool qk_norm = false;
  // Logit soft-capping (Gemma 2's, modded-nanoGPT's, nanochat's): the
  // logits become cap·tanh(logits/cap) before the loss and sampling; 0 is
  // off. One of kLogitSoftcaps (config.cpp), as --logit-softcap names it.
  float logit_softcap = 0.0f;

  int64_t head_size() const { return n_embd / n_head; }
};

// Empty when the config is usable, else one sentence naming the bad field and
// how to fix it (for the user, not an internal check).
std::string config_error(const GPTConfig& config);

// Note [Model choices]: the model options that pick one of a few names
// (--pos-encoding, --gelu, --norm, --mlp, --logit-softcap) or are switched
// on (--qk-norm), one row each. The training flag
// table, the checkpoint's /config (save and read), `tapegpt inspect` and
// `tapegpt params`, --init-from's checks, the run fingerprint and the parity
// tools all walk these rows, so a new choice is an enum, a field and a row
// here, plus the code that computes it (params.cpp, gpt.cpp).
struct ModelChoice {
  const char* key;    // in /config and parity JSON, e.g. "pos_encoding"
  const char* flag;   // on the command line without "--", e.g. "pos-encoding"
  const char* help;   // for --help, after the list of names
  std::vector<const char*> names;  // indexed by the enum's value; the default comes from GPTConfig{}
  int (*get)(const GPTConfig& c);
  void (*set)(GPTConfig& c, int value);
  // A switch: names are {"off", "on"} and the bare flag (e.g. --qk-norm)
  // turns it on; /config still records the name.
  bool is_switch = false;
};

const std::vector<ModelChoice>& model_choices();
const ModelChoice& model_choice(const std::string& key);  // aborts on an unknown key

const char* choice_name(const ModelChoice& row, const GPTConfig& c);
// Sets the field to `name`'s value; false (and `c` unchanged) on an unknown name.
bool choice_parse(const ModelChoice& row, const std::string& name, GPTConfig* c);
// The names for a message: "'learned', 'sinusoidal' or 'rope'".
std::string choice_list(const ModelChoice& row);
// "a | b | c" for --help.
std::string choice_alternatives(const ModelChoice& row);

const char* pos_encoding_name(PosEncoding p);
// Parses "learned" / "sinusoidal" / "rope"; false on anything else.
bool pos_encoding_parse(const std::string& name, PosEncoding* out);

const char* gelu_name(kernels::GeluKind g);
// Parses "tanh" / "erf"; false on anything else.
bool gelu_parse(const std::string& name, kernels::GeluKind* out);

const char* norm_name(NormKind n);
// Parses "layernorm" / "rmsnorm"; false on anything else.
bool norm_parse(const std::string& name, NormKind* out);

const char* mlp_name(MlpKind m);
// Parses "gelu" / "relu2" / "swiglu"; false on anything else.
bool mlp_parse(const std::string& name, MlpKind* out);

}  // namespace nn
