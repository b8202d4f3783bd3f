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
  // The options that keep a model out of each family.
  std::vector<std::string> gpt2_off, llama_off;
  if (c.norm != NormKind::LayerNorm) gpt2_off.push_back(flag_of(c, "norm"));
  if (c.mlp != MlpKind::Gelu) gpt2_off.push_back(flag_of(c, "mlp"));
  if (c.pos_encoding == PosEncoding::Rope) gpt2_off.push_back(flag_of(c, "pos_encoding"));
  if (c.norm != NormKind::RMSNorm) llama_off.push_back(flag_of(c, "norm"));
  if (c.mlp != MlpKind::Swiglu) llama_off.push_back(flag_of(c, "mlp"));
  if (c.pos_encoding != PosEncoding::Rope) llama_off.push_back(flag_of(c, "pos_encoding"));
  if (gpt2_off.empty()) return {ExportFamily::Gpt2, ""};
  if (llama_off.empty()) return {ExportFamily::Llama, ""};

  const bool nearer_gpt2 = gpt2_off.size() <= llama_off.size();
  const std::vector<std::string>& off = nearer_gpt2 ? gpt2_off : llama_off;
  std::string names;
  for (size_t i = 0; i < off.size(); ++i) names += (i ? (i + 1 == off.size() ? " and " : ", ") : "") + off[i];
  return {nearer_gpt2 ? ExportFamily::Gpt2 : ExportFamily::Llama,
          "this model's " + names + " cannot be expressed: the runtimes compute the GPT-2 family (--norm "
          "layernorm --mlp gelu, learned or sinusoidal positions) and the Llama family (--norm rmsnorm --mlp "
          "swiglu --pos-encoding rope), and nothing else exactly"};
}

const float* export_param(const nn::ParameterStore& store, const std::string& name) {
  TG_CHECK(!store.split);
  const nn::ParamInfo* p = store.find(name);
  return p ? store.params.data() + p->offset : nullptr;
}

}  // namespace checkpoints
