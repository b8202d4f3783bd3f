// Validation and naming for GPTConfig, and the table of model choices
// (Note [Model choices] in config.h).
#include "nn/config.h"

#include <iterator>

#include "autograd/base/check.h"

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
  // RoPE rotates the pairs (i, i + HS/2) of every head.
  if (c.pos_encoding == PosEncoding::Rope && c.head_size() % 2 != 0)
    return "rope positions need an even head size, but n_embd / n_head = " + std::to_string(c.head_size()) +
           ": pick n_embd and n_head with an even quotient";
  if (!(c.dropout >= 0.0f && c.dropout < 1.0f)) return "dropout must be in [0, 1)";
  return "";
}

namespace {

// Indexed by each enum's value; constant-initialised, so usable from any
// static initialiser.
constexpr const char* kPosNames[] = {"learned", "sinusoidal", "rope"};
constexpr const char* kGeluNames[] = {"tanh", "erf"};
constexpr const char* kNormNames[] = {"layernorm", "rmsnorm"};
constexpr const char* kMlpNames[] = {"gelu", "relu2", "swiglu"};
constexpr const char* kSwitchNames[] = {"off", "on"};
// --logit-softcap's names and their caps (0: off); nanochat found 15-20 best.
constexpr const char* kSoftcapNames[] = {"off", "15", "20", "30"};
constexpr float kLogitSoftcaps[] = {0.0f, 15.0f, 20.0f, 30.0f};

// The index of the config's cap in kLogitSoftcaps; -1 (refused by
// choice_name's check) for a cap no name gives.
int softcap_index(float cap) {
  for (size_t i = 0; i < std::size(kLogitSoftcaps); ++i)
    if (cap == kLogitSoftcaps[i]) return static_cast<int>(i);
  return -1;
}

template <size_t N>
std::vector<const char*> list(const char* const (&names)[N]) {
  return std::vector<const char*>(names, names + N);
}

template <typename E, size_t N>
bool parse_enum(const char* const (&names)[N], const std::string& name, E* out) {
  for (size_t i = 0; i < N; ++i)
    if (name == names[i]) {
      *out = static_cast<E>(i);
      return true;
    }
  return false;
}

}  // namespace

const std::vector<ModelChoice>& model_choices() {
  using C = GPTConfig;
  static const std::vector<ModelChoice> rows = {
      // key, flag, help, names (by enum value), get, set
      {"norm", "norm", "the normalisation before attention, MLP and lm_head (rmsnorm: gains only)",
       list(kNormNames), [](const C& c) { return static_cast<int>(c.norm); },
       [](C& c, int v) { c.norm = static_cast<NormKind>(v); }},
      {"pos_encoding", "pos-encoding", "positions: a learned table, sines added to the embedding, or rotary (RoPE) on q and k",
       list(kPosNames), [](const C& c) { return static_cast<int>(c.pos_encoding); },
       [](C& c, int v) { c.pos_encoding = static_cast<PosEncoding>(v); }},
      {"mlp", "mlp", "the MLP's activation: gelu (see --gelu), relu(x)^2, or SwiGLU (c_fc doubled: gate | value)",
       list(kMlpNames), [](const C& c) { return static_cast<int>(c.mlp); },
       [](C& c, int v) { c.mlp = static_cast<MlpKind>(v); }},
      {"gelu", "gelu", "GELU form: GPT-2's tanh approximation or erf (PyTorch's nn.GELU(), nanoGPT's current model)",
       list(kGeluNames), [](const C& c) { return static_cast<int>(c.gelu); },
       [](C& c, int v) { c.gelu = static_cast<kernels::GeluKind>(v); }},
      {"qk_norm", "qk-norm", "QK-norm: RMS-normalise each head's q and k (no gain) before attention",
       list(kSwitchNames), [](const C& c) { return static_cast<int>(c.qk_norm); },
       [](C& c, int v) { c.qk_norm = v != 0; }, /*is_switch=*/true},
      {"logit_softcap", "logit-softcap", "logit soft-capping: logits become cap*tanh(logits/cap) before the loss and sampling",
       list(kSoftcapNames), [](const C& c) { return softcap_index(c.logit_softcap); },
       [](C& c, int v) { c.logit_softcap = kLogitSoftcaps[v]; }},
  };
  return rows;
}

const ModelChoice& model_choice(const std::string& key) {
  for (const ModelChoice& row : model_choices())
    if (key == row.key) return row;
  TG_CHECK(false && "no model choice with that key");
  return model_choices().front();
}

const char* choice_name(const ModelChoice& row, const GPTConfig& c) {
  const int v = row.get(c);
  TG_CHECK(v >= 0 && static_cast<size_t>(v) < row.names.size());
  return row.names[static_cast<size_t>(v)];
}

bool choice_parse(const ModelChoice& row, const std::string& name, GPTConfig* c) {
  for (size_t i = 0; i < row.names.size(); ++i)
    if (name == row.names[i]) {
      row.set(*c, static_cast<int>(i));
      return true;
    }
  return false;
}

std::string choice_list(const ModelChoice& row) {
  std::string s;
  for (size_t i = 0; i < row.names.size(); ++i) {
    if (i > 0) s += i + 1 == row.names.size() ? " or " : ", ";
    s += std::string("'") + row.names[i] + "'";
  }
  return s;
}

std::string choice_alternatives(const ModelChoice& row) {
  std::string s;
  for (const char* name : row.names) s += (s.empty() ? "" : " | ") + std::string(name);
  return s;
}

const char* pos_encoding_name(PosEncoding p) { return kPosNames[static_cast<size_t>(p)]; }
bool pos_encoding_parse(const std::string& name, PosEncoding* out) { return parse_enum(kPosNames, name, out); }

const char* gelu_name(kernels::GeluKind g) { return kGeluNames[static_cast<size_t>(g)]; }
bool gelu_parse(const std::string& name, kernels::GeluKind* out) { return parse_enum(kGeluNames, name, out); }

const char* norm_name(NormKind n) { return kNormNames[static_cast<size_t>(n)]; }
bool norm_parse(const std::string& name, NormKind* out) { return parse_enum(kNormNames, name, out); }

const char* mlp_name(MlpKind m) { return kMlpNames[static_cast<size_t>(m)]; }
bool mlp_parse(const std::string& name, MlpKind* out) { return parse_enum(kMlpNames, name, out); }

}  // namespace nn
