// The checkpoint a command runs (eval, sample, attention, embed): its --ckpt
// flag and the model and tokenizer loaded from it.
#pragma once

#include <cxxopts.hpp>
#include <string>

#include "data/tokenizer.h"
#include "nn/gpt.h"
#include "train/precision.h"

namespace cli {

struct LoadedModel {
  nn::GPT model;
  data::Tokenizer tokenizer;
  int64_t step = 0;
  train::Precision trained = train::Precision::Fp32;  // the precision it was trained in (its saved flag)
};

// The --ckpt path, checked before any other flag, or the UsageError
// "--ckpt CKPT is required".
std::string required_ckpt(const cxxopts::ParseResult& r);

// Throws tg::DataError (naming the file) if it is missing or invalid.
LoadedModel load_model(const std::string& ckpt_path);

// --precision fp32|bf16|auto (default auto: the precision the checkpoint
// was trained in) for a command that runs a checkpoint, and applying it to
// the loaded model (train/precision.h).
void add_precision_option(cxxopts::Options& options,
                          const std::string& auto_means = "runs the precision the checkpoint was trained in");
train::PrecisionChoice apply_precision(const cxxopts::ParseResult& r, LoadedModel& lm);

}  // namespace cli
