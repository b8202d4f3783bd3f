// The training flag table's rows (Note [Training flags]) as cxxopts
// options: `train` declares them all, `bench` the model's and a few of the
// optimisation's, so a shape and optimizer are spelled alike in both.
#pragma once

#include <cxxopts.hpp>

#include "train/train_flags.h"

namespace cli {

// Declares row `f`; with_default false leaves out its default (bench, whose
// shape comes from --shape or --budget-rung).
void add_train_flag(cxxopts::OptionAdder& add, const train::TrainFlag& f, bool with_default = true);

// Row f's value on the command line, as the row's setter takes it.
train::FlagValue train_flag_value(const cxxopts::ParseResult& r, const train::TrainFlag& f);

}  // namespace cli
