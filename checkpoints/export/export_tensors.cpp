// The family table walked into one format's tensors (export_tensors.h).
#include "checkpoints/export/export_tensors.h"

#include <algorithm>
#include <utility>

#include "autograd/base/check.h"

namespace checkpoints {

namespace {

std::string with_layer(const char* pattern, int64_t layer) {
  std::string s = pattern;
  const size_t at = s.find("{L}");
  if (at != std::string::npos) s.replace(at, 3, std::to_string(layer));
  return s;
}

bool per_block(const TensorName& row) {
  return std::string(row.gguf ? row.gguf : row.hf).find("{L}") != std::string::npos;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// How many equal slices of our parameter's rows a part takes, and which.
std::pair<int64_t, int64_t> slice_of(Part part) {
  switch (part) {
    case Part::Q: return {3, 0};
    case Part::K: return {3, 1};
    case Part::V: return {3, 2};
    case Part::Gate: return {2, 0};
    case Part::Up: return {2, 1};
    default: return {1, 0};
  }
}

// One row of the table for one block (or for the model): false when the
// format writes nothing for it.
bool one_tensor(const ExportModel& m, const Family& f, ExportFormat format, const TensorName& row, int64_t layer,
                ExportTensor* out) {
  const nn::GPTConfig& c = m.config;
  const char* outside = format == ExportFormat::Gguf ? row.gguf : row.hf;
  if (!outside) return false;
  out->name = with_layer(outside, layer);
  if (row.part == Part::Ones) {
    out->shape = {c.head_size()};
    out->data.assign(static_cast<size_t>(c.head_size()), 1.0f);
    return true;
  }
  std::string ours = with_layer(row.ours, layer);
  if (ours == "transformer.wpe.weight" && m.position_table) {
    out->shape = {c.block_size, c.n_embd};
    out->data.assign(m.position_table, m.position_table + c.block_size * c.n_embd);
    return true;
  }
  // A tied head is wte; only GGUF's gptneox wants it written out.
  if (ours == "lm_head.weight" && c.tied) {
    if (format != ExportFormat::Gguf || !f.gguf.output_required) return false;
    ours = "transformer.wte.weight";
  }
  const auto [slices, index] = slice_of(row.part);
  const nn::ParamInfo* p = m.store.find(ours);
  if (!p) {
    // Absent: wpe with RoPE, or a bias of a model without biases (zeros
    // where the runtime requires the tensor).
    if (!ends_with(ours, ".bias") || f.biases != Biases::Zeros) return false;
    const nn::ParamInfo* w = m.store.find(ours.substr(0, ours.size() - 5) + ".weight");
    TG_CHECK(w != nullptr);
    out->shape = {w->shape[0] / slices};
    out->data.assign(static_cast<size_t>(out->shape[0]), 0.0f);
    return true;
  }
  const float* data = export_param(m.store, ours);
  const int64_t rows = p->shape[0] / slices, cols = p->shape.size() == 2 ? p->shape[1] : 1;
  out->shape = p->shape;
  out->shape[0] = rows;
  const float* first = data + index * rows * cols;
  if (format == ExportFormat::Gguf && f.gguf.adjacent_rope && (row.part == Part::Q || row.part == Part::K)) {
    out->data = rope_rows(first, 0, rows, cols, c.n_head);
  } else if (format == ExportFormat::Hf && f.hf.conv1d && nn::is_block_linear_weight(p->role)) {
    out->shape = {cols, rows};  // Conv1D's (in, out)
    out->data.resize(static_cast<size_t>(rows * cols));
    for (int64_t o = 0; o < rows; ++o)
      for (int64_t i = 0; i < cols; ++i) out->data[static_cast<size_t>(i * rows + o)] = first[o * cols + i];
  } else {
    out->data.assign(first, first + rows * cols);
  }
  return true;
}

}  // namespace

std::vector<float> rope_rows(const float* w, int64_t row0, int64_t C, int64_t cols, int64_t NH) {
  const int64_t HS = C / NH, half = HS / 2;
  std::vector<float> out(static_cast<size_t>(C * cols));
  for (int64_t h = 0; h < NH; ++h)
    for (int64_t i = 0; i < half; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        const float* src = w + (row0 + h * HS + i + j * half) * cols;
        std::copy(src, src + cols, out.begin() + (h * HS + 2 * i + j) * cols);
      }
  return out;
}

std::vector<ExportTensor> export_tensors(const ExportModel& m, const Family& f, ExportFormat format) {
  const std::vector<TensorName>& rows = *f.tensors;
  std::vector<ExportTensor> out;
  for (size_t i = 0; i < rows.size();) {
    // A run of per-block rows is written block by block, as the runtimes' converters do.
    size_t end = i + 1;
    if (per_block(rows[i]))
      while (end < rows.size() && per_block(rows[end])) ++end;
    const int64_t layers = per_block(rows[i]) ? m.config.n_layer : 1;
    for (int64_t l = 0; l < layers; ++l)
      for (size_t r = i; r < end; ++r) {
        ExportTensor t;
        if (one_tensor(m, f, format, rows[r], l, &t)) out.push_back(std::move(t));
      }
    i = end;
  }
  return out;
}

}  // namespace checkpoints
