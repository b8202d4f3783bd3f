// `tapegpt train --init-from CKPT`: a new run (fresh optimizer, step 0,
// fresh sampler) starting from a checkpoint's weights, e.g. an imported
// GPT-2. Kept apart from cmd_train.cpp, which owns new runs and resumes.
#pragma once

#include <cxxopts.hpp>

#include "train/budget/plan.h"
#include "train/options.h"

namespace train {
class Distributed;
}

namespace cli {

// The --budget plan for the whole job (cmd_train.cpp; Note [Budget
// everywhere] in train/budget/plan.h): false on a rank that leaves the
// error report to another.
bool plan_budget_for_job(const cxxopts::ParseResult& r, train::BudgetFit fit, train::Distributed& dist,
                         train::TrainOptions* o);

// `o` holds the command line's options (model shape flags included, as
// parsed with their defaults); the shape comes from the checkpoint instead,
// and a shape flag given explicitly must agree with it, except --block-size,
// which may crop the position table, and --dropout, which is free. With
// --budget the plan keeps that shape and fits the rest (BudgetFit::FineTune).
int init_from_run(const cxxopts::ParseResult& r, train::TrainOptions o, train::Distributed& dist);

}  // namespace cli
