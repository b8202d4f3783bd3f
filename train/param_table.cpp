// Parameter tables (see param_table.h).
#include "train/param_table.h"

namespace train {

namespace {

std::string dims(int64_t a, int64_t b) { return std::to_string(a) + "×" + std::to_string(b); }
std::string dim(int64_t a) { return std::to_string(a); }

}  // namespace

std::vector<ParamRow> exact_param_rows(const nn::GPTConfig& c) {
  const int64_t V = c.vocab_size, T = c.block_size, L = c.n_layer, NH = c.n_head, C = c.n_embd;
  const int64_t HS = C / NH;
  std::vector<ParamRow> rows = {
      {"token embedding (wte)", 1, dims(V, C), V * C},
  };
  if (c.pos_encoding == nn::PosEncoding::Learned) rows.push_back({"positions (wpe)", 1, dims(T, C), T * C});
  else rows.push_back({"positions (sinusoidal, fixed)", 0, dims(T, C), 0});
  rows.push_back({"attention query (per head)", L * NH, dims(HS, C), L * NH * HS * C});
  rows.push_back({"attention key (per head)", L * NH, dims(HS, C), L * NH * HS * C});
  rows.push_back({"attention value (per head)", L * NH, dims(HS, C), L * NH * HS * C});
  rows.push_back({"attention output (c_proj)", L, dims(C, C), L * C * C});
  rows.push_back({"MLP up (c_fc)", L, dims(4 * C, C), L * 4 * C * C});
  rows.push_back({"MLP down (c_proj)", L, dims(C, 4 * C), L * 4 * C * C});
  const int64_t norms = 2 * L + 1;
  rows.push_back({"LayerNorm weights", norms, dim(C), norms * C});
  if (c.bias) {
    rows.push_back({"LayerNorm biases", norms, dim(C), norms * C});
    rows.push_back({"linear biases", 4 * L, "3C, C, 4C, C", L * (3 * C + C + 4 * C + C)});
  }
  if (c.tied) rows.push_back({"unembedding (tied to wte)", 0, dims(V, C), 0});
  else rows.push_back({"unembedding (lm_head)", 1, dims(V, C), V * C});
  return rows;
}

std::vector<ParamRow> weight_matrix_rows(const nn::GPTConfig& c) {
  const int64_t V = c.vocab_size, L = c.n_layer, NH = c.n_head, C = c.n_embd;
  const int64_t HS = C / NH;
  return {
      {"token embedding", 1, dims(V, C), V * C},
      {"query (per head)", L * NH, dims(HS, C), L * NH * HS * C},
      {"key (per head)", L * NH, dims(HS, C), L * NH * HS * C},
      {"value-down (per head)", L * NH, dims(HS, C), L * NH * HS * C},
      {"attention output (value-up, all heads)", L, dims(C, C), L * C * C},
      {"MLP up", L, dims(4 * C, C), L * 4 * C * C},
      {"MLP down", L, dims(C, 4 * C), L * 4 * C * C},
      {"unembedding", 1, dims(V, C), V * C},
  };
}

}  // namespace train
