// The --budget planner (see plan.h, Note [Budget plan]).
#include "train/budget/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "autograd/base/errors.h"
#include "nn/params.h"
#include "train/metrics.h"
#include "train/train_flags.h"

namespace train {

// Move 2's balance: tokens seen per block weight. Measured in
// BENCHMARKS.md ("--budget: what was tried").
const double kTokensPerParameter = 4.0;

namespace {

// Move 1: what learned the most per minute (BENCHMARKS.md). Each row is a
// training flag, applied unless the user (or a --preset) gave it.
struct RecipeFlag {
  const char* flag;
  const char* value;
  const char* why;
};
const std::vector<RecipeFlag> kBudgetRecipe = {
    {"pos-encoding", "rope", "learned more per step than learned positions"},
    {"norm", "rmsnorm", "as good as LayerNorm and cheaper"},
    {"mlp", "relu2", "learned more per step than GELU"},
    {"no-bias", "", "biases did not help"},
    {"optimizer", "muon", "learned more per minute than AdamW, its dearer step included"},
    {"lr-schedule", "wsd", "held rate, then a straight decay that ends at the budget's last step"},
    {"lr-decay-frac", "0.3", "the last 30% of the steps decay"},
    {"beta2", "0.99", "AdamW's moments (embeddings, head, gains) over more steps"},
};

// Rung shapes: context and batch when the user gives none.
constexpr int64_t kLadderContext = 256;
constexpr int64_t kLadderBatch = 8;
constexpr int64_t kLadderTop = 12;  // 12 × 768: GPT-2 small's blocks

// Share of the budget the plan fills; the rest is slack for a busy machine
// (the guard in the loop spends it only when needed).
constexpr double kUsable = 0.97;
// Evaluations in a run (the last at its last step), and the share of the
// budget they may take together before they use part of the split.
constexpr int64_t kEvaluations = 8;
constexpr double kEvalShare = 0.03;
// A forward pass costs about this share of a training step.
constexpr double kForwardShare = 0.35;
// Checkpoints in a run (ckpt.h5 only, replaced each time).
constexpr int64_t kCheckpoints = 4;

int64_t block_weights(const nn::GPTConfig& c) { return 12 * c.n_layer * c.n_embd * c.n_embd; }

std::string fmt(const char* format, double a) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a);
  return buf;
}

std::string millions(double n) { return n >= 1e6 ? fmt("%.1fM", n / 1e6) : fmt("%.0fk", n / 1e3); }

std::string shape_text(const nn::GPTConfig& c) {
  return std::to_string(c.n_layer) + " layers x " + std::to_string(c.n_embd) + " wide, " +
         std::to_string(c.n_head) + " heads, context " + std::to_string(c.block_size);
}

// Seconds a save of the run's files takes, roughly: parameters and two
// moments at a few hundred MB/s.
double save_seconds(const nn::GPTConfig& c) {
  return 0.05 + static_cast<double>(nn::matmul_parameters(c) + c.vocab_size * c.n_embd) * 12.0 / 3e8;
}

// Seconds one whole-split evaluation takes.
double eval_seconds(const TrainOptions& o, double step_s, int64_t val_tokens) {
  const double batches = static_cast<double>(val_tokens) / static_cast<double>(o.batch_size * o.model.block_size);
  return std::max(1.0, batches) * step_s / static_cast<double>(o.grad_accum) * kForwardShare;
}

}  // namespace

nn::GPTConfig ladder_rung(int64_t depth, const nn::GPTConfig& base) {
  nn::GPTConfig c = base;
  c.n_layer = depth;
  c.n_embd = 64 * depth;
  c.n_head = depth;
  return c;
}

BudgetPlan plan_budget(TrainOptions o, const std::function<bool(const std::string&)>& given,
                       const CorpusFacts& corpus, double budget_s, bool fit_all, const PlanClock& clock) {
  BudgetPlan plan;
  auto& why = plan.choices;
  const double usable = kUsable * budget_s;

  // Move 1: the recipe.
  if (fit_all) {
    std::string kept, applied;
    for (const RecipeFlag& r : kBudgetRecipe) {
      const std::string shown = std::string("--") + r.flag + (*r.value ? " " : "") + r.value;
      if (given(r.flag)) {
        kept += (kept.empty() ? "" : ", ") + std::string("--") + r.flag;
        continue;
      }
      set_flag_from_text(*find_train_flag(r.flag), r.value, &o);
      why.push_back("recipe: " + shown + " (" + r.why + ")");
    }
    if (!kept.empty()) why.push_back("recipe: yours for " + kept);
    // Muon's own rate, as a plain --optimizer muon gets it.
    if (o.optimizer == OptimizerKind::Muon && !given("lr")) o.schedule.lr = kDefaultMuonLr;
    if (!given("min-lr")) o.schedule.min_lr = o.schedule.lr / 10.0;
  }

  // Move 2: the shape.
  const bool shape_given = given("n-layer") || given("n-embd") || given("n-head");
  if (fit_all && !given("block-size"))
    o.model.block_size = std::min<int64_t>(kLadderContext, std::max<int64_t>(16, corpus.train_tokens / 64));
  if (fit_all && !given("batch-size")) o.batch_size = kLadderBatch;
  const double step_tokens = static_cast<double>(tokens_per_step(o));
  if (!fit_all || shape_given) {
    plan.step_seconds = clock.step_seconds(o);
    why.push_back("model: " + shape_text(o.model) + (fit_all ? " (yours)" : " (as the flags say)") + ", " +
                  fmt("%.0f ms a step, measured", 1e3 * plan.step_seconds));
  } else {
    TrainOptions best = o;
    double best_step = 0;
    std::string stopped;
    for (int64_t d = 2; d <= kLadderTop; ++d) {
      TrainOptions cand = o;
      cand.model = ladder_rung(d, o.model);
      const double weights = static_cast<double>(block_weights(cand.model));
      const auto tokens_in = [&](double step_s) {
        return std::max(0.0, usable - clock.now()) / step_s * step_tokens;
      };
      if (best_step > 0) {  // predicted from the rung below: measure only a hopeful rung
        const double predicted = best_step * nn::training_flops_per_token(cand.model) /
                                 nn::training_flops_per_token(best.model);
        if (tokens_in(predicted) < kTokensPerParameter * weights) {
          stopped = fmt("rung %.0f would see", static_cast<double>(d)) +
                    fmt(" %.1f tokens per weight, predicted", tokens_in(predicted) / weights);
          break;
        }
      }
      const double step_s = clock.step_seconds(cand);
      if (best_step > 0 && tokens_in(step_s) < kTokensPerParameter * weights) {
        stopped = fmt("rung %.0f would see", static_cast<double>(d)) +
                  fmt(" %.1f tokens per weight, measured", tokens_in(step_s) / weights);
        break;
      }
      best = cand;
      best_step = step_s;
    }
    o.model = best.model;
    plan.step_seconds = best_step;
    const double weights = static_cast<double>(block_weights(o.model));
    why.push_back("model: " + shape_text(o.model) + " (depth ladder rung " + std::to_string(o.model.n_layer) +
                  ", " + millions(weights) + " block weights; " + fmt("%.0f ms a step, measured", 1e3 * best_step) +
                  ", buys " + fmt("%.1f tokens per weight", std::max(0.0, usable - clock.now()) / best_step *
                                                                  step_tokens / weights) +
                  fmt(", the most above %.0f", kTokensPerParameter) + (stopped.empty() ? "" : "; " + stopped) + ")");
  }

  // Move 4's time: what is left once evaluations and saves are paid for.
  const double eval_whole = eval_seconds(o, plan.step_seconds, corpus.val_tokens);
  const double eval_each = std::min(eval_whole, kEvalShare * budget_s / kEvaluations);
  const double saves = static_cast<double>(kCheckpoints + kEvaluations) * save_seconds(o.model);
  const double train_s = usable - clock.now() - kEvaluations * eval_each - saves;
  if (!given("max-steps") && train_s < 3 * plan.step_seconds)
    throw tg::UsageError(fmt("the budget leaves no time to train: measuring this machine took %.1f s and a step ",
                             clock.now()) +
                         fmt("takes %.2f s; give a longer --budget", plan.step_seconds) +
                         fmt(" (at least %.0f s here)", std::ceil((clock.now() + 20 * plan.step_seconds) / kUsable)));
  const int64_t steps =
      given("max-steps") ? o.max_steps : std::max<int64_t>(1, static_cast<int64_t>(train_s / plan.step_seconds));
  const double epochs = static_cast<double>(steps) * step_tokens / static_cast<double>(corpus.train_tokens);

  // Move 3: regularisation for the epochs. nanoGPT's Shakespeare recipe
  // (dropout 0.2) sees its corpus about 80 times.
  if (fit_all && !given("dropout")) {
    o.model.dropout = epochs >= 40 ? 0.2f : epochs >= 12 ? 0.1f : 0.0f;
    why.push_back(fmt("dropout: %.1f", o.model.dropout) + fmt(" (the plan reads the training split %.1f times", epochs) +
                  (o.model.dropout > 0 ? ": a small corpus seen often)" : ")"));
  }

  // Move 4: the steps and the cadence around them.
  if (given("max-steps")) {
    why.push_back("steps: " + std::to_string(steps) + " (yours; " +
                  fmt("%.0f s of training at the measured step time, ", steps * plan.step_seconds) +
                  fmt("%.0f s fit the budget)", train_s));
  } else {
    o.max_steps = steps;
    why.push_back("steps: " + std::to_string(steps) + " of " + std::to_string(tokens_per_step(o)) +
                  " tokens fill " + format_duration(train_s) + " of the " + format_duration(budget_s) +
                  " budget (" + fmt("%.1f", epochs) + " epochs)");
  }
  if (!given("lr-decay-steps")) o.schedule.decay_steps = o.max_steps;
  if (!given("warmup")) o.schedule.warmup = std::min<int64_t>(o.schedule.warmup, o.max_steps / 10);
  o.schedule.warmup = std::min(o.schedule.warmup, o.schedule.decay_steps);
  if (!given("eval-interval")) o.eval_interval = std::max<int64_t>(1, o.max_steps / kEvaluations);
  if (!given("eval-steps")) {
    o.eval_steps = eval_each >= eval_whole
                       ? 0
                       : std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(corpus.val_tokens) /
                                                                   static_cast<double>(o.batch_size *
                                                                                       o.model.block_size) *
                                                                   eval_each / eval_whole));
    why.push_back("evaluations: every " + std::to_string(o.eval_interval) + " steps on " +
                  (o.eval_steps == 0 ? std::string("the whole validation split")
                                     : std::to_string(o.eval_steps * o.batch_size) + " windows of it"));
  }
  if (!given("ckpt-interval")) o.ckpt_interval = std::max<int64_t>(1, o.max_steps / kCheckpoints);
  if (!given("keep")) o.keep = 0;
  plan.deadline_s = usable - eval_each - save_seconds(o.model);
  plan.hard_deadline_s = budget_s - eval_each - save_seconds(o.model);
  plan.options = o;
  return plan;
}

}  // namespace train
