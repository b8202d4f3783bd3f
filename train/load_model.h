// Loading a model (and its tokenizer) from a checkpoint for eval and sample.
#pragma once

#include <string>

#include "data/tokenizer.h"
#include "nn/gpt.h"

namespace cli {

struct LoadedModel {
  nn::GPT model;
  data::Tokenizer tokenizer;
  int64_t step = 0;
};

// Throws tg::DataError (naming the file) if it is missing or invalid.
LoadedModel load_model(const std::string& ckpt_path);

}  // namespace cli
