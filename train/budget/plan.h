// Note [Budget plan]
// `tapegpt train --budget 5m` answers the user's question: how good a model
// can I get from my text in the time I have? The planner (plan_budget)
// makes four moves, each printed with its reason in the run header and
// saved in the checkpoint:
// 1. The recipe: the choices that learned the most per minute on every
//    corpus tried (BENCHMARKS.md, "--budget: what was tried"), as flags,
//    like a --preset: kBudgetRecipe in plan.cpp.
// 2. The shape, on one dial as nanochat's --depth: a ladder of shapes
//    (kLadder in plan.cpp: 2 x 128 up to 12 x 768, heads of 64). From the
//    smallest rung up, each rung's step is measured on this machine
//    (step_timer.h; the time counts against the budget) and the planner
//    climbs while the tokens the budget buys stay at least
//    kTokensPerParameter times the rung's block weights (12·L·C²), the
//    balance of model size and data that measured best; a rung whose
//    predicted step time (the last measured, scaled by FLOPs) already fails
//    is not measured.
// 3. Regularisation for the epochs the plan makes of the corpus: dropout
//    where a small corpus is seen many times.
// 4. The steps: the time left after the measurements, the evaluations and
//    the saves, over the measured step time; the schedule (WSD) decays to
//    its end at the last of them. The loop's guard (guard.h) revises the
//    count while the learning rate is still held, if the machine turns out
//    slower or faster than measured.
// Flags the user gives win over each move's choice. --budget-fit steps
// keeps moves 1-3 as the flags (or the defaults) say and makes move 4 only:
// the user's own model, fitted to the clock.
//
// Note [Budget everywhere]
// Two settings change the moves:
// - Fine-tuning (--init-from CKPT --budget): the checkpoint fixes the
//   architecture and shape, so move 1 sets the optimisation rows only and
//   move 2 measures that shape, choosing its batch (about the tokens a step
//   of the ladder's rung of that size) and a gentler learning rate.
// - Under mpirun (ranks > 1) every rank plans, in lockstep: each candidate
//   is measured by all ranks stepping together (the gradient sum included)
//   and the clock's readings are rank 0's, so every rank makes the same
//   choices. Each rank runs one micro-batch of the rung's batch a step: the
//   job's batch grows with its processes, and the rung is the largest the
//   whole job's tokens feed.
// A resumed budget run keeps its clock: the checkpoint saves the budget's
// seconds spent and the plan's deadlines (on the budget's clock, which
// stops while no process runs), and the resumed guard (guard.h) aims at
// them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "train/options.h"

namespace train {

struct CorpusFacts {
  int64_t train_tokens = 0;
  int64_t val_tokens = 0;
};

// The machine, as the planner sees it: `step_seconds(o)` measures one
// training step of the candidate `o` (step_timer.h); `now()` is the seconds
// since the command started, measurements included.
struct PlanClock {
  std::function<double(const TrainOptions&)> step_seconds;
  std::function<double()> now;
};

struct BudgetPlan {
  TrainOptions options;               // the run's, every choice applied
  std::vector<std::string> choices;   // "what: value (why)", for the header and the checkpoint
  double step_seconds = 0;            // measured for the chosen shape
  double deadline_s = 0;              // when the last step should end (seconds since the command started)
  double hard_deadline_s = 0;         // the latest it may end, the final evaluation and save kept aside
};

// Plans a run of `setting.budget_s` seconds (whole command: measuring,
// training, evaluations, saves) from `o` (defaults, preset and the user's
// flags applied; with --init-from the checkpoint's shape; `given(flag)` says
// which flags the user or a preset set).
enum class BudgetFit {
  All,       // moves 1-4 (--budget-fit all)
  Steps,     // move 4 only (--budget-fit steps)
  FineTune,  // --init-from: the checkpoint's architecture and shape kept
};

struct PlanSetting {
  double budget_s = 0;
  BudgetFit fit = BudgetFit::All;
  int ranks = 1;  // processes of the job (mpirun -np)
};

BudgetPlan plan_budget(TrainOptions o, const std::function<bool(const std::string&)>& given,
                       const CorpusFacts& corpus, const PlanSetting& setting, const PlanClock& clock);

// Move 2's ladder: its rungs, rung r's shape (its other fields from
// `base`), and its context length.
int64_t ladder_rungs();
nn::GPTConfig ladder_rung(int64_t rung, const nn::GPTConfig& base);
int64_t ladder_context(int64_t rung);
int64_t ladder_batch(int64_t rung);  // sequences a step at that rung's context
// What a --budget run on rung `rung` (0-based) trains: `base` with the
// recipe (move 1), the rung's shape, context and batch, and Muon's rate for
// its width (move 2). For `tapegpt bench --budget-rung`, which times the
// steps the planner chooses among.
TrainOptions budget_rung_options(int64_t rung, TrainOptions base);
// Muon's peak learning rate for a model `width` wide (move 2).
double budget_muon_lr(int64_t width);
// Fine-tuning's peak rate: this share of a new model's (move 2).
extern const double kFineTuneLrShare;

// Tokens per block weight a run should see (move 2), from the measurements
// in BENCHMARKS.md.
extern const double kTokensPerParameter;

}  // namespace train
