// The `tapegpt params` report: parameter counts of a GPT by matrix kind, the
// exact count of our model and the "weight-matrix view" used when explaining
// attention. (nn/params.h holds the parameter table itself; this reads it.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/config.h"

namespace train {

struct ParamsReportRow {
  std::string kind;      // e.g. "attention query (per head)"
  int64_t matrices = 0;  // how many tensors of this kind
  std::string shape;     // of one of them, e.g. "64×768"
  int64_t parameters = 0;
};

// Our model exactly as built (biases, norms, positions; lm_head only when
// untied). Sums to the model's parameter count.
std::vector<ParamsReportRow> params_report_exact_rows(const nn::GPTConfig& config);

// Weight matrices only: each head's query, key and value-down maps as
// separate d_head×d_model matrices, one attention output matrix per layer
// (all heads' value-up maps side by side), MLP up and down, and the token
// embedding and unembedding counted separately even when tied. Biases,
// norms and position embeddings are left out.
std::vector<ParamsReportRow> params_report_weight_matrix_rows(const nn::GPTConfig& config);

}  // namespace train
