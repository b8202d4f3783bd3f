// Parameter tables (see param_table.h), read off nn's parameter table.
#include "train/param_table.h"

#include "nn/params.h"

namespace train {

namespace {

using nn::ParamRole;

// Every table entry of the given roles: how many, the shape of the first,
// their total size.
struct Group {
  int64_t tensors = 0;
  std::vector<int64_t> shape;
  int64_t numel = 0;
};

Group group(const nn::ParamLayout& layout, std::initializer_list<ParamRole> roles) {
  Group g;
  for (const nn::ParamInfo& p : layout.table)
    for (ParamRole r : roles)
      if (p.role == r) {
        if (g.tensors++ == 0) g.shape = p.shape;
        g.numel += p.numel;
      }
  return g;
}

std::string dims(const std::vector<int64_t>& shape) {
  std::string s;
  for (int64_t d : shape) s += (s.empty() ? "" : "×") + std::to_string(d);
  return s;
}

ParamRow row(const std::string& kind, const Group& g) { return {kind, g.tensors, dims(g.shape), g.numel}; }

// c_attn's [3C, C] weights as n_head query, key and value matrices [C/n_head, C] each.
void add_per_head_rows(std::vector<ParamRow>* rows, const Group& qkv, int64_t n_head,
                       const char* const (&kinds)[3]) {
  const std::vector<int64_t> one = {qkv.shape[0] / 3 / n_head, qkv.shape[1]};
  for (const char* kind : kinds) rows->push_back({kind, qkv.tensors * n_head, dims(one), qkv.numel / 3});
}

// A size in units of C: "C", "3C", or the number itself.
std::string in_units_of(int64_t n, int64_t C) {
  if (n == C) return "C";
  return n % C == 0 ? std::to_string(n / C) + "C" : std::to_string(n);
}

}  // namespace

std::vector<ParamRow> exact_param_rows(const nn::GPTConfig& c) {
  const nn::ParamLayout layout = nn::param_layout(c);
  std::vector<ParamRow> rows = {row("token embedding (wte)", group(layout, {ParamRole::TokenEmbedding}))};
  if (c.pos_encoding == nn::PosEncoding::Learned) rows.push_back(row("positions (wpe)", group(layout, {ParamRole::PositionEmbedding})));
  else rows.push_back({"positions (sinusoidal, fixed)", 0, dims({c.block_size, c.n_embd}), 0});
  add_per_head_rows(&rows, group(layout, {ParamRole::QkvWeight}), c.n_head,
                    {"attention query (per head)", "attention key (per head)", "attention value (per head)"});
  rows.push_back(row("attention output (c_proj)", group(layout, {ParamRole::AttnProjWeight})));
  rows.push_back(row("MLP up (c_fc)", group(layout, {ParamRole::MlpUpWeight})));
  rows.push_back(row("MLP down (c_proj)", group(layout, {ParamRole::MlpDownWeight})));
  rows.push_back(row("LayerNorm weights", group(layout, {ParamRole::AttnNormWeight, ParamRole::MlpNormWeight,
                                                         ParamRole::FinalNormWeight})));
  if (c.bias) {
    rows.push_back(row("LayerNorm biases", group(layout, {ParamRole::AttnNormBias, ParamRole::MlpNormBias,
                                                          ParamRole::FinalNormBias})));
    const std::initializer_list<ParamRole> linear_biases = {ParamRole::QkvBias, ParamRole::AttnProjBias,
                                                            ParamRole::MlpUpBias, ParamRole::MlpDownBias};
    ParamRow linear = row("linear biases", group(layout, linear_biases));
    linear.shape.clear();  // the four sizes of a block's, e.g. "3C, C, 4C, C"
    for (ParamRole r : linear_biases)
      linear.shape += (linear.shape.empty() ? "" : ", ") + in_units_of(layout.first(r).shape[0], c.n_embd);
    rows.push_back(linear);
  }
  if (c.tied) rows.push_back({"unembedding (tied to wte)", 0, dims({c.vocab_size, c.n_embd}), 0});
  else rows.push_back(row("unembedding (lm_head)", group(layout, {ParamRole::OutputHead})));
  return rows;
}

std::vector<ParamRow> weight_matrix_rows(const nn::GPTConfig& c) {
  const nn::ParamLayout layout = nn::param_layout(c);
  const Group wte = group(layout, {ParamRole::TokenEmbedding});
  std::vector<ParamRow> rows = {row("token embedding", wte)};
  add_per_head_rows(&rows, group(layout, {ParamRole::QkvWeight}), c.n_head,
                    {"query (per head)", "key (per head)", "value-down (per head)"});
  rows.push_back(row("attention output (value-up, all heads)", group(layout, {ParamRole::AttnProjWeight})));
  rows.push_back(row("MLP up", group(layout, {ParamRole::MlpUpWeight})));
  rows.push_back(row("MLP down", group(layout, {ParamRole::MlpDownWeight})));
  rows.push_back(row("unembedding", c.tied ? wte : group(layout, {ParamRole::OutputHead})));
  return rows;
}

}  // namespace train
