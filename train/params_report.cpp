// The `tapegpt params` report (see params_report.h), read off nn's parameter table.
#include "train/params_report.h"

#include <algorithm>

#include "nn/params.h"

namespace train {

namespace {

using R = nn::ParamRole;

std::string dims(const std::vector<int64_t>& shape) {
  std::string s;
  for (int64_t d : shape) s += (s.empty() ? "" : "×") + std::to_string(d);
  return s;
}

// One row for every table entry of the given roles: how many, the shape of
// the first, their total size.
ParamsReportRow row(const nn::ParamLayout& layout, const std::string& kind, std::initializer_list<R> roles) {
  ParamsReportRow r{kind, 0, "", 0};
  for (const nn::ParamInfo& p : layout.table)
    if (std::find(roles.begin(), roles.end(), p.role) != roles.end()) {
      if (r.matrices++ == 0) r.shape = dims(p.shape);
      r.parameters += p.numel;
    }
  return r;
}

// c_attn's [3C, C] weights as n_head query, key and value matrices [C/n_head, C] each.
void add_per_head_rows(std::vector<ParamsReportRow>* rows, const nn::ParamLayout& layout, int64_t n_head,
                       const char* const (&kinds)[3]) {
  const ParamsReportRow qkv = row(layout, "", {R::QkvWeight});
  const std::vector<int64_t>& shape = layout.first(R::QkvWeight).shape;
  for (const char* kind : kinds)
    rows->push_back({kind, qkv.matrices * n_head, dims({shape[0] / 3 / n_head, shape[1]}), qkv.parameters / 3});
}

// A size in units of C: "C", "3C", or the number itself.
std::string in_units_of(int64_t n, int64_t C) {
  if (n == C) return "C";
  return n % C == 0 ? std::to_string(n / C) + "C" : std::to_string(n);
}

}  // namespace

std::vector<ParamsReportRow> params_report_exact_rows(const nn::GPTConfig& c) {
  const nn::ParamLayout layout = nn::param_layout(c);
  std::vector<ParamsReportRow> rows = {row(layout, "token embedding (wte)", {R::TokenEmbedding})};
  if (c.pos_encoding == nn::PosEncoding::Learned) rows.push_back(row(layout, "positions (wpe)", {R::PositionEmbedding}));
  else if (c.pos_encoding == nn::PosEncoding::Sinusoidal)
    rows.push_back({"positions (sinusoidal, fixed)", 0, dims({c.block_size, c.n_embd}), 0});
  else rows.push_back({"positions (rope: q, k rotated, fixed)", 0, dims({c.block_size, c.head_size() / 2}), 0});
  add_per_head_rows(&rows, layout, c.n_head,
                    {"attention query (per head)", "attention key (per head)", "attention value (per head)"});
  rows.push_back(row(layout, "attention output (c_proj)", {R::AttnProjWeight}));
  rows.push_back(row(layout, c.mlp == nn::MlpKind::Swiglu ? "MLP up (c_fc: gate | value)" : "MLP up (c_fc)",
                     {R::MlpUpWeight}));
  rows.push_back(row(layout, "MLP down (c_proj)", {R::MlpDownWeight}));
  const bool layernorm = c.norm == nn::NormKind::LayerNorm;
  rows.push_back(row(layout, layernorm ? "LayerNorm weights" : "RMSNorm gains",
                     {R::AttnNormWeight, R::MlpNormWeight, R::FinalNormWeight}));
  if (c.bias) {
    if (layernorm)
      rows.push_back(row(layout, "LayerNorm biases", {R::AttnNormBias, R::MlpNormBias, R::FinalNormBias}));
    const std::initializer_list<R> linear = {R::QkvBias, R::AttnProjBias, R::MlpUpBias, R::MlpDownBias};
    rows.push_back(row(layout, "linear biases", linear));
    rows.back().shape.clear();  // a block's four sizes, e.g. "3C, C, 4C, C"
    for (R r : linear)
      rows.back().shape += (rows.back().shape.empty() ? "" : ", ") + in_units_of(layout.first(r).shape[0], c.n_embd);
  }
  if (c.tied) rows.push_back({"unembedding (tied to wte)", 0, dims({c.vocab_size, c.n_embd}), 0});
  else rows.push_back(row(layout, "unembedding (lm_head)", {R::OutputHead}));
  return rows;
}

std::vector<ParamsReportRow> params_report_weight_matrix_rows(const nn::GPTConfig& c) {
  const nn::ParamLayout layout = nn::param_layout(c);
  std::vector<ParamsReportRow> rows = {row(layout, "token embedding", {R::TokenEmbedding})};
  add_per_head_rows(&rows, layout, c.n_head, {"query (per head)", "key (per head)", "value-down (per head)"});
  rows.push_back(row(layout, "attention output (value-up, all heads)", {R::AttnProjWeight}));
  rows.push_back(row(layout, "MLP up", {R::MlpUpWeight}));
  rows.push_back(row(layout, "MLP down", {R::MlpDownWeight}));
  rows.push_back(row(layout, "unembedding", {c.tied ? R::TokenEmbedding : R::OutputHead}));
  return rows;
}

}  // namespace train
