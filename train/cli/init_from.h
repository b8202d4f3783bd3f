// `tapegpt train --init-from CKPT`: a new run (fresh optimizer, step 0,
// fresh sampler) starting from a checkpoint's weights, e.g. an imported
// GPT-2. Kept apart from cmd_train.cpp, which owns new runs and resumes.
#pragma once

#include <cxxopts.hpp>

#include "train/options.h"

namespace cli {

// `o` holds the command line's options (model shape flags included, as
// parsed with their defaults); the shape comes from the checkpoint instead,
// and a shape flag given explicitly must agree with it, except --block-size,
// which may crop the position table, and --dropout, which is free.
int init_from_run(const cxxopts::ParseResult& r, train::TrainOptions o);

}  // namespace cli
