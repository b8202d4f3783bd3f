// `tapegpt train`: start a run from prepared data, or resume one from its
// checkpoint with no other flags, writing beside that checkpoint.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>

#include "autograd/base/errors.h"
#include "autograd/base/fnv.h"
#include "autograd/kernels/bf16.h"
#include "checkpoints/checkpoint.h"
#include "data/tokenizer_json.h"
#include "data/token_file.h"
#include "nn/gpt.h"
#include "train/budget/duration.h"
#include "train/budget/plan.h"
#include "train/budget/step_timer.h"
#include "train/distributed/distributed.h"
#include "train/metrics.h"
#include "train/cli/cli_util.h"
#include "train/cli/train_flag_options.h"
#include "train/cli/commands.h"
#include "train/cli/init_from.h"
#include "train/precision.h"
#include "train/presets.h"
#include "train/run_dir.h"
#include "train/train_flags.h"
#include "train/trainer.h"

namespace cli {

namespace {

// The run flags, the common ones, then the model's and the optimisation's,
// as --help lists them.
void add_options(cxxopts::Options& opts) {
  auto add_group = [&](const std::string& group) {
    cxxopts::OptionAdder add = opts.add_options(group);
    for (const train::TrainFlag& f : train::train_flags())
      if (f.group == group && !f.name.empty()) add_train_flag(add, f);
  };
  add_group("run");
  add_common_options(opts);
  add_group("model");
  add_group("optimisation");
}

// Whether the command line, or the --preset it names, sets `flag`.
std::function<bool(const std::string&)> given_flags(const cxxopts::ParseResult& r) {
  const train::TrainPreset* preset =
      r.count("preset") ? train::find_train_preset(get<std::string>(r, "preset")) : nullptr;
  return [&r, preset](const std::string& flag) {
    if (r.count(flag)) return true;
    if (preset)
      for (const auto& kv : preset->flags)
        if (kv.first == flag) return true;
    return false;
  };
}

// --adamw-lr and --muon-momentum mean something only to Muon.
void check_muon_settings(const cxxopts::ParseResult& r, const train::TrainOptions& o) {
  if (o.optimizer == train::OptimizerKind::AdamW && (r.count("adamw-lr") || r.count("muon-momentum")))
    throw tg::UsageError(std::string("--") + (r.count("adamw-lr") ? "adamw-lr" : "muon-momentum") +
                         " is a setting of --optimizer muon; with adamw, --lr is AdamW's learning rate");
}

train::TrainOptions options_from_command_line(const cxxopts::ParseResult& r) {
  train::TrainOptions o = train::default_options();
  if (!r.count("data")) throw tg::UsageError("--data DIR is required (a directory made by 'tapegpt prepare')");
  if (!r.count("out")) throw tg::UsageError("--out RUNDIR is required (where checkpoints and metrics go)");
  o.out_dir = get<std::string>(r, "out");
  if (r.count("budget-fit") && !r.count("budget"))
    throw tg::UsageError("--budget-fit says what --budget fits: add --budget DURATION (e.g. --budget 5m)");
  // Every flag that has a value: given, defaulted, or a switch (given or not).
  for (const train::TrainFlag& f : train::train_flags()) {
    if (!f.set || f.name.empty()) continue;
    if (r.count(f.name) || !f.default_text.empty() || f.type == train::FlagType::Switch)
      f.set(o, train_flag_value(r, f));
  }
  // A recipe fills in what the command line left to the defaults.
  const train::TrainPreset* preset = nullptr;
  if (r.count("preset")) {
    const std::string name = get<std::string>(r, "preset");
    preset = train::find_train_preset(name);
    if (!preset)
      throw tg::UsageError("--preset must be " + train::train_preset_list() + " (got '" + name +
                           "'); model shapes such as gpt2-small are for 'tapegpt params --preset'");
    train::apply_train_preset(*preset, [&](const std::string& flag) { return r.count(flag) > 0; }, &o);
  }
  const auto given = given_flags(r);
  // Muon's own default rate, unless the command line names one (a recipe's
  // --lr is AdamW's).
  if (o.optimizer == train::OptimizerKind::Muon && !r.count("lr")) o.schedule.lr = train::kDefaultMuonLr;
  // Under --budget the recipe picks the optimizer (unless given): its
  // settings are checked once the plan has chosen (plan_budget).
  if (!(r.count("budget") && o.budget_fit == "all" && !given("optimizer"))) check_muon_settings(r, o);
  if (r.count("lr-decay-frac") && o.schedule.shape != train::LrShape::Wsd)
    throw tg::UsageError("--lr-decay-frac is the decay of --lr-schedule wsd; with the cosine schedule the "
                         "decay lasts until --lr-decay-steps: remove it or add --lr-schedule wsd");
  train::apply_derived_defaults(given, &o);  // Note [Derived defaults]
  o.threads = get<int>(r, "threads");
  return o;
}

// Note [Budget plan] in train/budget/plan.h: measures, chooses, prints the
// choices with their reasons and keeps them in the options (so in the
// checkpoint); arms the loop's guard unless --max-steps was given. Under
// mpirun every rank plans in lockstep on rank 0's readings (Note [Budget
// everywhere]); the ranks then check that they made one plan.
void plan_budget(const cxxopts::ParseResult& r, train::BudgetFit fit, train::Distributed& dist,
                 train::TrainOptions* o) {
  const double budget_s = train::parse_duration_seconds(o->budget, "budget");
  train::CorpusFacts corpus;
  corpus.train_tokens = data::TokenFile(o->data_dir + "/train.bin").size();
  corpus.val_tokens = data::TokenFile(o->data_dir + "/val.bin").size();
  std::printf("budget: %s for the whole run; measuring this machine%s...\n", o->budget.c_str(),
              dist.size() > 1 ? (" (the " + std::to_string(dist.size()) + " processes stepping together)").c_str()
                              : "");
  std::fflush(stdout);
  train::PlanClock clock{
      [&dist](const train::TrainOptions& c) { return dist.from_root(train::measure_step_seconds(c, &dist)); },
      [&dist] { return dist.from_root(command_seconds()); }};
  const auto given = given_flags(r);
  const train::BudgetPlan plan =
      train::plan_budget(*o, given, corpus, train::PlanSetting{budget_s, fit, dist.size()}, clock);
  *o = plan.options;
  check_muon_settings(r, *o);
  o->budget_plan.clear();
  for (const std::string& line : plan.choices) {
    std::printf("budget: %s\n", line.c_str());
    o->budget_plan += (o->budget_plan.empty() ? "" : "\n") + line;
  }
  std::printf("budget: planned in %.1f s\n", command_seconds());
  if (!given("max-steps")) {
    o->budget_deadline_s = plan.deadline_s;
    o->budget_hard_deadline_s = plan.hard_deadline_s;
  }
  const std::string err = train::options_error(*o);
  if (!err.empty()) throw tg::UsageError("--budget " + o->budget + ": " + err);
}

}  // namespace

// The same on every rank of the job, one error line for all of them; false
// on the ranks that leave the report to another.
bool plan_budget_for_job(const cxxopts::ParseResult& r, train::BudgetFit fit, train::Distributed& dist,
                         train::TrainOptions* o) {
  return dist.agree_setup([&] {
    plan_budget(r, fit, dist, o);
    const std::string plan = o->budget_plan + "|" + std::to_string(o->max_steps);
    return tg::fnv1a(plan.data(), plan.size());
  });
}

namespace {

int start_run(const cxxopts::ParseResult& r, train::Distributed& dist) {
  train::TrainOptions o = options_from_command_line(r);
  if (r.count("change-precision"))
    throw tg::UsageError("--change-precision is for --resume; a new run takes --precision alone");
  // Never replace a run the user already has by accident.
  if (!r.count("overwrite") && train::holds_run(o.out_dir))
    throw tg::UsageError(o.out_dir + " already holds a run (ckpt.h5): continue it with --resume " +
                         o.out_dir + "/ckpt.h5, choose another --out, or pass --overwrite to start over");
  o.replace_run = true;  // a new run: fresh metrics.jsonl, no files of an old one
  const data::Tokenizer tokenizer = data::load_tokenizer_dir(o.data_dir);
  o.model.vocab_size = tokenizer.vocab_size();
  const std::string err = train::options_error(o);
  if (!err.empty()) throw tg::UsageError(err);
  set_threads(o.threads);  // before auto's measurement, which runs on the run's threads
  if (!o.budget.empty() &&
      !plan_budget_for_job(r, o.budget_fit == "all" ? train::BudgetFit::All : train::BudgetFit::Steps, dist, &o))
    return 1;
  train::resolve_precision(&o);
  // Sharded, the moments are allocated per rank, for its slice only (Note
  // [Sharded optimizer state]): never whole, or they would set the peak.
  nn::ParameterStore store = nn::parameter_store_create(o.model, !o.shard_optimizer);
  if (o.shard_optimizer) store.grads.resize(store.total);
  nn::GPT model = nn::gpt_create(o.model, std::move(store));
  nn::InitOptions init;
  init.zero_residual_proj = o.zero_init_proj;
  nn::gpt_init(model, o.seed, init);
  o.seconds_before_loop = command_seconds();
  return train::run_training(o, model, tokenizer.spec(), train::new_run_state(o.seed), false, false, dist);
}

// A run resumes with the optimizer it was saved by, whose state the file
// holds (Note [Muon] in train/optimizer.h): /optimizer's name and the saved
// flag must agree, and a --optimizer given may only restate it.
void resume_optimizer_check(const std::string& path, const std::string& saved_name, train::OptimizerKind run,
                            const cxxopts::ParseResult& r) {
  const std::string name = train::optimizer_name(run);
  if (saved_name != name)
    throw tg::DataError(path + ": /optimizer holds the state of '" + saved_name + "' but the run's flags say '" +
                        name + "'; the checkpoint is damaged or from another program");
  if (r.count("optimizer") && get<std::string>(r, "optimizer") != name)
    throw tg::UsageError("--optimizer " + get<std::string>(r, "optimizer") + ": the run in " + path +
                         " was trained with --optimizer " + name + " and resumes with it; to switch, start a "
                         "new run from its weights with --init-from " + path);
}

// A run resumes in the precision it was trained in (saved in its
// checkpoint); --precision may restate it, and changes it only with
// --change-precision.
void resume_precision(const std::string& path, const std::string& saved, const cxxopts::ParseResult& r,
                      train::TrainOptions* o) {
  const std::string asked = r.count("precision") ? get<std::string>(r, "precision") : saved;
  if (asked != saved && !r.count("change-precision"))
    throw tg::UsageError("--precision " + asked + ": the run in " + path + " was trained in " + saved +
                         " and resumes in it; add --change-precision to continue it in " + asked);
  if (r.count("change-precision") && !r.count("precision"))
    throw tg::UsageError("--change-precision needs --precision fp32, bf16 or auto: the precision to continue in");
  o->precision = asked;
  try {
    train::resolve_precision(o, asked == saved ? "the run's own" : "changed from " + saved);
  } catch (const tg::UsageError&) {
    if (asked != saved) throw;
    throw tg::UsageError(path + " was trained in bf16, which oneDNN cannot run here (" +
                         kernels::dnnl_version() + ", " + kernels::dnnl_effective_isa() +
                         "): continue it in float32 with --change-precision --precision fp32");
  }
}

int resume_run(const cxxopts::ParseResult& r, train::Distributed& dist) {
  for (const auto& kv : r.arguments()) {
    // The common options (--threads, --help) are not training flags; a
    // Restates row (--optimizer, --precision) is checked below, once the
    // saved value is known.
    const train::TrainFlag* f = train::find_train_flag(kv.key());
    if (f ? f->resume == train::Resume::Refused : !is_common_option(kv.key()))
      throw tg::UsageError("--" + kv.key() + " cannot be changed when resuming: the run keeps the value "
                           "saved in its checkpoint (remove the flag, or start a new run)");
  }
  const std::string path = get<std::string>(r, "resume");
  checkpoints::Loaded ck = checkpoints::load_checkpoint(path, true);
  if (!ck.has_optimizer)
    throw tg::DataError(path + " holds no optimizer state (a best.h5 is model-only); resume from the run's ckpt.h5");
  train::TrainOptions o = train::default_options();
  o.model = ck.meta.config;
  o.precision = "fp32";  // a file from before precisions were saved was trained in float32
  train::options_from_flags(ck.meta.train.flags, &o);
  resume_optimizer_check(path, ck.meta.optimizer.name, o.optimizer, r);
  const std::string saved_precision = train::precision_name(train::precision_of_saved(o.precision));
  // Note [Where a run writes] in run_dir.h: never the directory recorded in the file.
  o.out_dir = r.count("out") ? get<std::string>(r, "out") : train::checkpoint_dir(path);
  const std::string other = train::other_run_in(o.out_dir, ck.meta, path);
  if (!other.empty()) {
    if (!r.count("overwrite"))
      throw tg::UsageError(o.out_dir + " already holds a different run (" + other + ") than " + path +
                           " (" + train::run_identity(ck.meta.train) +
                           "); resume into another --out DIR, or pass --overwrite to replace that run");
    o.replace_run = true;
  } else if (!train::holds_run(o.out_dir) && !train::same_directory(o.out_dir, train::checkpoint_dir(path))) {
    o.replace_run = true;  // a new home for the run: a stale log there is not its own
  }
  o.resumed_from = path;
  for (const train::TrainFlag& f : train::train_flags())
    if (f.resume == train::Resume::Changes && f.set && r.count(f.name)) f.set(o, train_flag_value(r, f));
  if (r.count("lr")) o.schedule.min_lr = std::min(o.schedule.min_lr, o.schedule.lr);
  o.threads = get<int>(r, "threads");
  const std::string err = train::options_error(o);
  if (!err.empty()) throw tg::UsageError(err);
  const int64_t step = ck.meta.train.step;
  if (step >= o.max_steps)
    throw tg::UsageError("the run in " + path + " already finished (step " + std::to_string(step) +
                         " of max_steps " + std::to_string(o.max_steps) +
                         "); pass --max-steps N with N > " + std::to_string(step) + " to train further");
  set_threads(o.threads);  // before auto's measurement (--change-precision --precision auto)
  resume_precision(path, saved_precision, r, &o);
  if (!o.budget.empty()) {
    // Note [Budget everywhere]: the budget's clock goes on from where the
    // run's log got (the steps after the checkpoint were spent too); a
    // --max-steps given takes the run out of the budget's hands.
    if (r.count("max-steps")) {
      o.budget_deadline_s = o.budget_hard_deadline_s = 0;
    } else if (train::other_run_in(train::checkpoint_dir(path), ck.meta, path).empty()) {
      o.budget_spent_s =
          std::max(o.budget_spent_s, train::latest_elapsed_seconds(train::checkpoint_dir(path) + "/metrics.jsonl"));
    }
  }
  nn::GPT model = nn::gpt_create(o.model);
  model.store = std::move(ck.store);
  nn::gpt_bind_views(model);
  // Files from before format_version 2 carry no run id: the run gets one now.
  if (ck.meta.train.run_id.empty()) ck.meta.train.run_id = train::new_run_id();
  o.seconds_before_loop = command_seconds();
  return train::run_training(o, model, ck.meta.tokenizer, ck.meta.train, true, r.count("allow-data-change") > 0,
                             dist);
}

}  // namespace

int cmd_train(int argc, char** argv) {
  cxxopts::Options opts("tapegpt train",
                        "Train a GPT on prepared token files, or resume a run from its checkpoint.\n"
                        "  tapegpt train --data DIR --out RUNDIR [flags]\n"
                        "  tapegpt train --resume RUNDIR/ckpt.h5 [--max-steps N] [--out NEWDIR]\n"
                        "  tapegpt train --init-from CKPT --data DIR --out RUNDIR [flags]\n"
                        "A resumed run writes beside the checkpoint it was given, or into --out.");
  add_options(opts);
  cxxopts::ParseResult r;
  if (!parse_or_help(opts, argc, argv, &r)) return 0;
  if (!r.unmatched().empty())
    throw tg::UsageError("unexpected argument '" + r.unmatched()[0] + "'; see 'tapegpt train --help'");
  command_seconds();  // the budget's clock starts with the command
  train::Distributed dist;  // Note [Data parallelism]; one process unless run by mpirun
  if (r.count("init-from")) return init_from_run(r, options_from_command_line(r), dist);
  return r.count("resume") ? resume_run(r, dist) : start_run(r, dist);
}

}  // namespace cli
