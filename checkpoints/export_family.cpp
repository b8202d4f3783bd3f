// The export families (Note [Export families]).
#include "checkpoints/export_family.h"

#include <vector>

#include "autograd/base/check.h"

namespace checkpoints {

namespace {

// "--norm rmsnorm" for the config's value of one model choice.
std::string flag_of(const nn::GPTConfig& c, const char* key) {
  const nn::ModelChoice& row = nn::model_choice(key);
  return std::string("--") + row.flag + " " + nn::choice_name(row, c);
}

}  // namespace

FamilyChoice export_family(const nn::GPTConfig& c) {
  using nn::MlpKind, nn::NormKind, nn::PosEncoding;
  struct Family {
    ExportFamily family;
    NormKind norm;
    MlpKind mlp;
    bool rope;  // else learned or sinusoidal positions
  };
  static const Family kFamilies[] = {{ExportFamily::Gpt2, NormKind::LayerNorm, MlpKind::Gelu, false},
                                     {ExportFamily::Llama, NormKind::RMSNorm, MlpKind::Swiglu, true},
                                     {ExportFamily::NeoX, NormKind::LayerNorm, MlpKind::Gelu, true}};
  // The options that keep the model out of each family; the nearest wins.
  std::vector<std::string> best;
  ExportFamily nearest = ExportFamily::Gpt2;
  for (const Family& f : kFamilies) {
    std::vector<std::string> off;
    if (c.norm != f.norm) off.push_back(flag_of(c, "norm"));
    if (c.mlp != f.mlp) off.push_back(flag_of(c, "mlp"));
    if ((c.pos_encoding == PosEncoding::Rope) != f.rope) off.push_back(flag_of(c, "pos_encoding"));
    if (off.empty()) return {f.family, ""};
    if (best.empty() || off.size() < best.size()) best = off, nearest = f.family;
  }
  std::string names;
  for (size_t i = 0; i < best.size(); ++i)
    names += (i ? (i + 1 == best.size() ? " and " : ", ") : "") + best[i];
  return {nearest, "this model's " + names + " cannot be expressed: the runtimes compute the GPT-2 family "
                   "(--norm layernorm --mlp gelu, learned or sinusoidal positions), the Llama family (--norm "
                   "rmsnorm --mlp swiglu --pos-encoding rope) and, in GGUF, GPT-NeoX's (--norm layernorm --mlp "
                   "gelu --pos-encoding rope), and nothing else exactly"};
}

const float* export_param(const nn::ParameterStore& store, const std::string& name) {
  TG_CHECK(!store.split);
  const nn::ParamInfo* p = store.find(name);
  return p ? store.params.data() + p->offset : nullptr;
}

}  // namespace checkpoints
