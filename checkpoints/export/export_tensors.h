// A model's tensors as one format names and lays them out, read from the
// family table (Note [Export families]): the one walk both writers share.
//
// Each row of the family's table gives one tensor per block ("{L}") or one
// for the model: the rows of our parameter its part names (Part), or ones
// (Part::Ones), or zeros for a bias the model lacks where the family's
// runtime requires it (Biases::Zeros; the length from the matching weight).
// wpe is the sinusoidal table when the model has one (it adds the same
// vector), and a tied head is skipped unless GGUF's Gguf::output_required.
// Then each format's layout: GGUF reorders q and k rows to adjacent RoPE
// pairs where Gguf::adjacent_rope (Note [GGUF export]); Hugging Face stores
// block linear weights transposed where Hf::conv1d (GPT-2's Conv1D).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoints/export/export_family.h"
#include "data/tokenizer_spec.h"
#include "nn/config.h"
#include "nn/params.h"

namespace checkpoints {

struct ExportModel {
  const nn::GPTConfig& config;
  const nn::ParameterStore& store;
  const float* position_table;  // the sinusoidal table [block_size, C], else null
  const data::TokenizerSpec& tokenizer;
  std::string name;             // general.name
};

enum class ExportFormat { Gguf, Hf };

struct ExportTensor {
  std::string name;            // the format's name
  std::vector<int64_t> shape;  // PyTorch order (the GGUF writer reverses it)
  std::vector<float> data;     // row-major
};

// Every tensor of `family` (which must be the model's) in `format`, in table
// order, the block rows layer by layer.
std::vector<ExportTensor> export_tensors(const ExportModel& model, const Family& family, ExportFormat format);

// Rows [row0, row0 + C) of a [rows, cols] tensor, each head's rows reordered
// from rotate_half pairs (i, i + HS/2) to adjacent pairs (2i, 2i+1).
std::vector<float> rope_rows(const float* w, int64_t row0, int64_t C, int64_t cols, int64_t NH);

}  // namespace checkpoints
