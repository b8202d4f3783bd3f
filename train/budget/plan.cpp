// The --budget planner (see plan.h, Note [Budget plan]).
#include "train/budget/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "autograd/base/check.h"
#include "autograd/base/errors.h"
#include "nn/params.h"
#include "train/evaluate.h"
#include "train/metrics.h"
#include "train/train_flags.h"

namespace train {

// Move 2's balance: tokens seen per block weight. Measured in
// BENCHMARKS.md ("--budget: what was tried").
const double kTokensPerParameter = 1.5;
// Muon's peak rate at 512 wide (budget_muon_lr scales it by sqrt(width)):
// tapegpt's Muon default, which is 0.01 at 128 wide.
const double kMuonLrAt512 = kDefaultMuonLr;
// Fine-tuning starts from weights that already predict: its peak rate is
// this share of a new model's, and its steps read this share of the tokens
// of a step of the ladder's rung of its size (more, smaller steps). Both
// measured on two corpora, a third held out (BENCHMARKS.md, "--budget
// everywhere").
const double kFineTuneLrShare = 0.5;
constexpr double kFineTuneBatchShare = 0.5;

namespace {

// Move 1: what learned the most per minute (BENCHMARKS.md). Each row is a
// training flag, applied unless the user (or a --preset) gave it.
struct RecipeFlag {
  const char* flag;
  const char* value;
  const char* why;
  bool architecture;  // fixed by the checkpoint when fine-tuning
};
const std::vector<RecipeFlag> kBudgetRecipe = {
    {"pos-encoding", "rope", "learned more per step than learned positions", true},
    {"norm", "rmsnorm", "as good as LayerNorm and cheaper", true},
    {"mlp", "relu2", "learned more per minute than GELU, and SwiGLU's step costs more", true},
    {"no-bias", "", "biases did not help", true},
    {"optimizer", "muon", "learned more per minute than AdamW, its dearer step included", false},
    {"lr-schedule", "wsd", "held rate, then a straight decay that ends at the budget's last step", false},
    {"lr-decay-frac", "0.3", "the last 30% of the steps decay", false},
    {"beta2", "0.99", "AdamW's moments (embeddings, head, gains) over more steps", false},
};

// Move 2's ladder, smallest first: (layers, width), heads of 64. Widths
// and depths that measured well on 2 cores (4 x 192 and 4 x 256 at five
// minutes on Tiny Shakespeare) up to GPT-2 small's blocks; the first rungs
// read 128 tokens of context, 24 sequences a step, the deeper ones 256 and
// 16. Twice the batch of tapegpt's defaults: a step's fixed costs (Muon's
// Newton-Schulz matmuls, the optimizer pass, OpenMP's fork/joins) weigh
// heavily at these widths, and at two minutes 24 sequences learned more than
// 12 on all three corpora tried (48 no more than 24; BENCHMARKS.md).
struct Rung {
  int64_t layers, width;
};
const std::vector<Rung> kLadder = {{2, 128}, {4, 128}, {4, 192}, {4, 256}, {6, 256}, {6, 384}, {8, 512}, {12, 768}};
constexpr int64_t kLongContextFromLayers = 6;
// A rung is measured unless it would miss even at this many times the FLOP
// rate of the rung below: larger matmuls run faster (on a quiet machine a
// token of 4 x 192 cost 2.1x one of 4 x 128 for 2.3x the FLOPs), and the
// machine's speed drifts by up to 40% within minutes, so one measurement
// taken in a slow moment must not rule out the next rung.
constexpr double kPredictedSpeedup = 1.7;

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

// Seconds one whole-split evaluation takes: every rank scores it all, at
// the time of one of its micro-batches' forward passes.
double eval_seconds(const TrainOptions& o, double step_s, int64_t val_tokens, int ranks) {
  const double batches = static_cast<double>(val_tokens) / static_cast<double>(o.batch_size * o.model.block_size);
  const double own_micro_batches = static_cast<double>(o.grad_accum) / static_cast<double>(ranks);
  return std::max(1.0, batches) * step_s / own_micro_batches * kForwardShare;
}

// The ladder's rung whose blocks are nearest in weights to c's.
int64_t nearest_rung(const nn::GPTConfig& c) {
  int64_t best = 0;
  const auto gap = [&](int64_t rung) {
    return std::abs(std::log(static_cast<double>(block_weights(ladder_rung(rung, c))) /
                             static_cast<double>(std::max<int64_t>(1, block_weights(c)))));
  };
  for (int64_t rung = 1; rung < ladder_rungs(); ++rung)
    if (gap(rung) < gap(best)) best = rung;
  return best;
}

}  // namespace

int64_t ladder_rungs() { return static_cast<int64_t>(kLadder.size()); }

nn::GPTConfig ladder_rung(int64_t rung, const nn::GPTConfig& base) {
  nn::GPTConfig c = base;
  c.n_layer = kLadder[static_cast<size_t>(rung)].layers;
  c.n_embd = kLadder[static_cast<size_t>(rung)].width;
  c.n_head = c.n_embd / 64;
  return c;
}

int64_t ladder_context(int64_t rung) {
  return kLadder[static_cast<size_t>(rung)].layers >= kLongContextFromLayers ? 256 : 128;
}

int64_t ladder_batch(int64_t rung) { return ladder_context(rung) == 128 ? 24 : 16; }

TrainOptions budget_rung_options(int64_t rung, TrainOptions o) {
  TG_CHECK(rung >= 0 && rung < ladder_rungs());
  for (const RecipeFlag& r : kBudgetRecipe) set_flag_from_text(*find_train_flag(r.flag), r.value, &o);
  o.model = ladder_rung(rung, o.model);
  o.model.block_size = ladder_context(rung);
  o.batch_size = ladder_batch(rung);
  o.schedule.lr = budget_muon_lr(o.model.n_embd);
  return o;
}

double budget_muon_lr(int64_t width) { return kMuonLrAt512 * std::sqrt(static_cast<double>(width) / 512.0); }

BudgetPlan plan_budget(TrainOptions o, const std::function<bool(const std::string&)>& given,
                       const CorpusFacts& corpus, const PlanSetting& setting, const PlanClock& clock) {
  BudgetPlan plan;
  auto& why = plan.choices;
  const double budget_s = setting.budget_s;
  const double usable = kUsable * budget_s;
  const bool fit_all = setting.fit != BudgetFit::Steps;
  const bool fine_tune = setting.fit == BudgetFit::FineTune;
  const int ranks = setting.ranks;

  // Move 1: the recipe (fine-tuning: its optimisation rows only).
  if (fit_all) {
    std::string kept, fixed;
    for (const RecipeFlag& r : kBudgetRecipe) {
      const std::string shown = std::string("--") + r.flag + (*r.value ? " " : "") + r.value;
      if (fine_tune && r.architecture) {
        fixed += (fixed.empty() ? "" : ", ") + std::string("--") + r.flag;
        continue;
      }
      if (given(r.flag)) {
        kept += (kept.empty() ? "" : ", ") + std::string("--") + r.flag;
        continue;
      }
      set_flag_from_text(*find_train_flag(r.flag), r.value, &o);
      why.push_back("recipe: " + shown + " (" + r.why + ")");
    }
    if (!fixed.empty()) why.push_back("recipe: the checkpoint's for " + fixed + " (fine-tuning keeps its architecture)");
    if (!kept.empty()) why.push_back("recipe: yours for " + kept);
    // Muon's rate waits for the chosen width (move 2).
  }
  // Under mpirun each rank runs its own micro-batch of a step.
  if (ranks > 1 && !given("grad-accum")) o.grad_accum *= ranks;
  if (ranks > 1)
    why.push_back("processes: " + std::to_string(ranks) + " (mpirun), each " +
                  std::to_string(o.grad_accum / ranks) + " micro-batch" + (o.grad_accum / ranks > 1 ? "es" : "") +
                  " a step" + (given("grad-accum") ? " (your --grad-accum)" : "") +
                  ": the job's batch is theirs together, and the plan is the whole job's");

  // Move 2: the shape. A rung's context and batch, unless given; the
  // context no longer than a tiny corpus allows.
  const bool shape_given = given("n-layer") || given("n-embd") || given("n-head");
  const auto with_rung = [&](int64_t rung) {
    TrainOptions c = o;
    c.model = ladder_rung(rung, o.model);
    const int64_t context = ladder_context(rung);
    if (!given("block-size")) c.model.block_size = std::min(context, std::max<int64_t>(16, corpus.train_tokens / 64));
    if (!given("batch-size")) c.batch_size = ladder_batch(rung);
    return c;
  };
  // Tokens the time left buys at step_s seconds a step of c.
  const auto tokens_in = [&](const TrainOptions& c, double step_s) {
    return std::max(0.0, usable - clock.now()) / step_s * static_cast<double>(tokens_per_step(c));
  };
  if (fine_tune) {
    // The checkpoint's shape, at a share of the tokens a step of the
    // ladder's rung of its size.
    const int64_t rung = nearest_rung(o.model);
    const double tokens = kFineTuneBatchShare * static_cast<double>(ladder_batch(rung) * ladder_context(rung));
    if (!given("batch-size"))
      o.batch_size = std::max<int64_t>(1, std::llround(tokens / static_cast<double>(o.model.block_size)));
    plan.step_seconds = clock.step_seconds(o);
    why.push_back("model: " + shape_text(o.model) + " (the checkpoint's), " + std::to_string(o.batch_size) +
                  " sequences a micro-batch" +
                  (given("batch-size") ? " (yours)"
                                       : fmt(" (about %.0f tokens: ", tokens) +
                                             fmt("%.2g of a step of ladder rung ", kFineTuneBatchShare) +
                                             std::to_string(rung + 1) +
                                             ", the nearest in size; fine-tuning learned more from smaller steps)") +
                  ", " + fmt("%.0f ms a step, measured", 1e3 * plan.step_seconds));
  } else if (!fit_all || shape_given) {
    plan.step_seconds = clock.step_seconds(o);
    why.push_back("model: " + shape_text(o.model) + (fit_all ? " (yours)" : " (as the flags say)") + ", " +
                  fmt("%.0f ms a step, measured", 1e3 * plan.step_seconds));
  } else {
    TrainOptions best = with_rung(0);
    double best_step = 0;
    int64_t best_rung = 0;
    std::string stopped;
    for (int64_t rung = 0; rung < ladder_rungs(); ++rung) {
      const TrainOptions cand = with_rung(rung);
      const double weights = static_cast<double>(block_weights(cand.model));
      const auto too_big = [&](double step_s, const char* how) {
        const double per_weight = tokens_in(cand, step_s) / weights;
        if (per_weight >= kTokensPerParameter) return false;
        stopped = "the next, " + shape_text(cand.model) + fmt(", would see %.1f tokens per weight", per_weight) + how;
        return true;
      };
      // Predicted from the rung below (FLOPs per token, at kPredictedSpeedup
      // its rate: larger matmuls run faster): a rung that misses even so is
      // not measured.
      if (best_step > 0 &&
          too_big(best_step * static_cast<double>(tokens_per_step(cand)) * nn::training_flops_per_token(cand.model) /
                      (kPredictedSpeedup * static_cast<double>(tokens_per_step(best)) *
                       nn::training_flops_per_token(best.model)),
                  ", predicted"))
        break;
      const double step_s = clock.step_seconds(cand);
      if (best_step > 0 && too_big(step_s, ", measured")) break;
      best = cand;
      best_step = step_s;
      best_rung = rung;
    }
    o.model = best.model;
    o.batch_size = best.batch_size;
    plan.step_seconds = best_step;
    const double weights = static_cast<double>(block_weights(o.model));
    why.push_back("model: " + shape_text(o.model) + ", " + std::to_string(o.batch_size) +
                  " sequences a " + (ranks > 1 ? "micro-batch" : "step") + " (ladder rung " +
                  std::to_string(best_rung + 1) + " of " + std::to_string(ladder_rungs()) + ", " +
                  millions(weights) + " block weights; " + fmt("%.0f ms a step, measured; ", 1e3 * best_step) +
                  fmt("the budget buys %.1f tokens per weight", tokens_in(o, best_step) / weights) +
                  fmt(", the largest rung at or above %.1f", kTokensPerParameter) +
                  (stopped.empty() ? "" : "; " + stopped) + ")");
  }
  // Move 2's learning rate, for the chosen width: Muon's update is a
  // (semi-)orthogonal matrix, whose entries shrink as 1/sqrt(width), so the
  // rate grows as sqrt(width) to move each weight alike on every rung.
  if (fit_all && o.optimizer == OptimizerKind::Muon && !given("lr")) {
    o.schedule.lr = budget_muon_lr(o.model.n_embd) * (fine_tune ? kFineTuneLrShare : 1.0);
    why.push_back(fmt("learning rate: Muon %.3g", o.schedule.lr) +
                  fmt(" (%.2g x sqrt(width / 512): the same step per weight at every width; at 128 wide ", kMuonLrAt512) +
                  "0.01 learned more than 0.02" +
                  (fine_tune ? fmt("; fine-tuning takes %.2g of it", kFineTuneLrShare) : std::string()) +
                  "), decaying to a tenth");
  } else if (fine_tune && !given("lr")) {
    o.schedule.lr *= kFineTuneLrShare;
    why.push_back(fmt("learning rate: %.3g", o.schedule.lr) +
                  fmt(" (%.2g of a new model's: fine-tuning starts from weights that already predict)",
                      kFineTuneLrShare));
  }
  const double step_tokens = static_cast<double>(tokens_per_step(o));

  // Move 4's time: what is left once evaluations and saves are paid for.
  // Each evaluation scores windows spread over the validation split (Note
  // [Spread evaluation]), as many as its share of the budget pays for; the
  // last one scores the whole split where that is cheap enough.
  const double eval_whole = eval_seconds(o, plan.step_seconds, corpus.val_tokens, ranks);
  const int64_t split_windows = count_eval_windows(corpus.val_tokens, o.model.block_size);
  if (!given("eval-steps")) {
    const double affordable = std::min(eval_whole, kEvalShare * budget_s / kEvaluations);
    o.eval_steps = affordable >= eval_whole
                       ? 0
                       : std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(split_windows) /
                                                                   static_cast<double>(o.batch_size) *
                                                                   affordable / eval_whole));
  }
  const int64_t partial_windows = o.eval_steps * o.batch_size;
  const double eval_each =
      o.eval_steps == 0 ? eval_whole
                        : eval_whole * std::min(1.0, static_cast<double>(partial_windows) /
                                                         static_cast<double>(std::max<int64_t>(1, split_windows)));
  const double eval_last = final_eval_is_whole(partial_windows, split_windows) ? eval_whole : eval_each;
  const double saves = static_cast<double>(kCheckpoints + kEvaluations) * save_seconds(o.model);
  const double train_s = usable - clock.now() - (kEvaluations - 1) * eval_each - eval_last - saves;
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
  if (!given("warmup")) o.schedule.warmup = std::min<int64_t>(o.schedule.warmup, o.max_steps / 10);
  apply_derived_defaults(given, &o);
  if (!given("eval-interval")) o.eval_interval = std::max<int64_t>(1, o.max_steps / kEvaluations);
  if (!given("eval-steps"))
    why.push_back("evaluations: every " + std::to_string(o.eval_interval) + " steps on " +
                  (o.eval_steps == 0 ? std::string("the whole validation split")
                                     : std::to_string(partial_windows) + " of its " + std::to_string(split_windows) +
                                           " windows, spread evenly over it" +
                                           (eval_last == eval_whole ? "; the last on all of them" : "")));
  if (!given("ckpt-interval")) o.ckpt_interval = std::max<int64_t>(1, o.max_steps / kCheckpoints);
  if (!given("keep")) o.keep = 0;
  plan.deadline_s = usable - eval_last - save_seconds(o.model);
  plan.hard_deadline_s = budget_s - eval_last - save_seconds(o.model);
  plan.options = o;
  return plan;
}

}  // namespace train
