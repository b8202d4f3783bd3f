// The export families (Note [Export families]).
#include "checkpoints/export_family.h"

#include <vector>

#include "autograd/base/check.h"

namespace checkpoints {

namespace {

// "--norm rmsnorm" for the config's value of one model choice; "--qk-norm"
// for a switch that is on.
std::string flag_of(const nn::GPTConfig& c, const char* key) {
  const nn::ModelChoice& row = nn::model_choice(key);
  if (row.is_switch) return std::string("--") + row.flag;
  return std::string("--") + row.flag + " " + nn::choice_name(row, c);
}

}  // namespace

FamilyChoice export_family(const nn::GPTConfig& c) {
  using nn::MlpKind, nn::NormKind, nn::PosEncoding;
  // A model choice the families below do not name (e.g. --qk-norm) must be
  // at its default: no runtime computes it, so a new choice is refused here
  // until a family learns it. (--gelu is each format's to check.)
  for (const nn::ModelChoice& row : nn::model_choices()) {
    const std::string key = row.key;
    if (key == "norm" || key == "mlp" || key == "pos_encoding" || key == "gelu") continue;
    if (row.get(c) != row.get(nn::GPTConfig{}))
      return {ExportFamily::Gpt2, "this model's " + flag_of(c, row.key) +
                                      " cannot be expressed: no runtime family computes it; train without it to export"};
  }
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
