// The table of training flags and the checkpoint conversions (see
// train_flags.h, Note [Training flags]).
#include "train/train_flags.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <variant>

#include "autograd/base/check.h"
#include "autograd/base/errors.h"
#include "train/presets.h"

namespace train {

namespace {

int64_t as_int(const FlagValue& v) { return std::get<int64_t>(v); }
double as_real(const FlagValue& v) { return std::get<double>(v); }
const std::string& as_text(const FlagValue& v) { return std::get<std::string>(v); }

std::string text(int64_t v) { return std::to_string(v); }
std::string text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// "NAME: what it is (--flag value …)" for each recipe, for --help.
std::string preset_help() {
  std::string s;
  for (const TrainPreset& p : train_presets()) {
    s += std::string(s.empty() ? "" : "; ") + p.name + ": " + p.help + " (";
    for (size_t i = 0; i < p.flags.size(); ++i) {
      const auto& [flag, value] = p.flags[i];
      s += std::string(i ? " " : "") + "--" + flag + (*value ? " " : "") + value;
    }
    s += ")";
  }
  return s;
}

std::vector<TrainFlag> make_table() {
  using T = FlagType;
  using O = TrainOptions;
  using V = FlagValue;
  using R = Resume;
  const TrainOptions& d = default_options();
  const nn::GPTConfig& m = d.model;
  std::vector<TrainFlag> table = {
      // name, group, help, type, default, resume rule, saved slot, saved as, set, get
      {"data", "run", "prepared data directory (train.bin, val.bin, tokenizer.json)", T::Text, "", R::Refused, 0, "data",
       [](O& o, const V& v) { o.data_dir = as_text(v); }, [](const O& o) { return V{o.data_dir}; }},
      {"out", "run", "run directory for ckpt.h5, best.h5, metrics.jsonl", T::Text, "", R::Changes, -1, "", nullptr, nullptr},
      {"resume", "run", "continue the run saved in this checkpoint", T::Text, "", R::Changes, -1, "", nullptr, nullptr},
      {"init-from", "run",
       "start a new run from this checkpoint's weights (e.g. an imported GPT-2): fresh optimizer, step 0; the "
       "shape comes from it, --block-size may crop it",
       T::Text, "", R::Refused, -1, "", nullptr, nullptr},
      {"preset", "run", "a training recipe; flags given here win over its values. " + preset_help(), T::Text, "",
       R::Refused, 25, "preset", [](O& o, const V& v) { o.preset = as_text(v); },
       [](const O& o) { return V{o.preset}; }},
      {"budget", "run",
       "train for this wall time, everything included (90s, 5m, 2h): measures this machine, then chooses the "
       "model, optimizer, schedule, regularisation and steps that fill it (Note [Budget plan]); flags given "
       "win over its choices, which the run header prints with their reasons",
       T::Text, "", R::Refused, 27, "budget", [](O& o, const V& v) { o.budget = as_text(v); },
       [](const O& o) { return V{o.budget}; }},
      {"budget-fit", "run",
       "with --budget: all (choose everything) or steps (keep the model and optimizer the flags or defaults "
       "give; fit only the steps and the schedule into the budget)",
       T::Text, "all", R::Refused, 28, "budget_fit",
       [](O& o, const V& v) {
         if (as_text(v) != "all" && as_text(v) != "steps")
           throw tg::UsageError("--budget-fit must be 'all' or 'steps' (got '" + as_text(v) + "')");
         o.budget_fit = as_text(v);
       },
       [](const O& o) { return V{o.budget_fit}; }},
      {"", "run", "the --budget plan's choices and reasons (saved, not a flag)", T::Text, "", R::Refused, 29,
       "budget_plan", [](O& o, const V& v) { o.budget_plan = as_text(v); },
       [](const O& o) { return V{o.budget_plan}; }},
      {"", "run", "the budget's seconds spent at the save (saved, not a flag)", T::Real, "", R::Refused, 30,
       "budget_spent_s", [](O& o, const V& v) { o.budget_spent_s = as_real(v); },
       [](const O& o) { return V{o.budget_spent_s}; }},
      {"", "run", "when the budget's last step should end (saved, not a flag)", T::Real, "", R::Refused, 31,
       "budget_deadline_s", [](O& o, const V& v) { o.budget_deadline_s = as_real(v); },
       [](const O& o) { return V{o.budget_deadline_s}; }},
      {"", "run", "the latest the budget's last step may end (saved, not a flag)", T::Real, "", R::Refused, 32,
       "budget_hard_deadline_s", [](O& o, const V& v) { o.budget_hard_deadline_s = as_real(v); },
       [](const O& o) { return V{o.budget_hard_deadline_s}; }},
      {"allow-data-change", "run", "with --resume: accept token files that differ from the run's", T::Switch, "",
       R::Changes, -1, "", nullptr, nullptr},
      {"overwrite", "run",
       "write into a directory that holds another run: that run's checkpoints and metrics.jsonl are replaced "
       "once the new run logs its first step",
       T::Switch, "", R::Changes, -1, "", nullptr, nullptr},
      {"no-overlap", "run",
       "under mpirun: sum the gradients across processes after the backward pass, not block by block during "
       "it (same result; for measuring)",
       T::Switch, "", R::Changes, -1, "", [](O& o, const V& v) { o.overlap_allreduce = !as_int(v); }, nullptr},
      {"shard-optimizer", "run",
       "under mpirun: each process keeps the AdamW moments of, and updates, 1/N of the parameters, then the "
       "processes gather the updated weights (ZeRO stage 1: less memory, the same result; off by default; "
       "checkpoints stay whole, so any run resumes with or without it)",
       T::Switch, "", R::Changes, -1, "", [](O& o, const V& v) { o.shard_optimizer = as_int(v) != 0; }, nullptr},
      {"stall-timeout", "run",
       "under mpirun: seconds a process waits for the others at a gradient sum before it names the rank that "
       "does not answer and stops every rank (0 = wait forever)",
       T::Real, text(d.stall_timeout_s), R::Changes, -1, "",
       [](O& o, const V& v) {
         if (!(as_real(v) >= 0.0))
           throw tg::UsageError("--stall-timeout must be 0 (wait forever) or a number of seconds");
         o.stall_timeout_s = as_real(v);
       },
       nullptr},

      {"n-layer", "model", "transformer blocks", T::Int, text(m.n_layer), R::Refused, -1, "",
       [](O& o, const V& v) { o.model.n_layer = as_int(v); }, nullptr},
      {"n-head", "model", "attention heads per block", T::Int, text(m.n_head), R::Refused, -1, "",
       [](O& o, const V& v) { o.model.n_head = as_int(v); }, nullptr},
      {"n-embd", "model", "embedding width (a multiple of --n-head)", T::Int, text(m.n_embd), R::Refused, -1, "",
       [](O& o, const V& v) { o.model.n_embd = as_int(v); }, nullptr},
      {"block-size", "model", "context length T", T::Int, text(m.block_size), R::Refused, -1, "",
       [](O& o, const V& v) { o.model.block_size = as_int(v); }, nullptr},
      {"dropout", "model",
       "dropout probability while training: embeddings, attention probabilities, residual branches (nanoGPT's)",
       T::Real, "0", R::Refused, -1, "", [](O& o, const V& v) { o.model.dropout = static_cast<float>(as_real(v)); },
       nullptr},
      {"no-bias", "model", "no biases in linear layers and LayerNorms", T::Switch, "", R::Refused, -1, "",
       [](O& o, const V& v) { o.model.bias = !as_int(v); }, nullptr},
      {"untied", "model", "separate lm_head instead of the token embedding", T::Switch, "", R::Refused, -1, "",
       [](O& o, const V& v) { o.model.tied = !as_int(v); }, nullptr},
      {"zero-init-proj", "model",
       "start the residual projections (attn.c_proj, mlp.c_proj) at zero instead of normal(0, 0.02/sqrt(2L))",
       T::Switch, "", R::Refused, 24, "zero_init_proj", [](O& o, const V& v) { o.zero_init_proj = as_int(v) != 0; },
       [](const O& o) { return V{int64_t{o.zero_init_proj}}; }},

      {"batch-size", "optimisation", "sequences per micro-batch B", T::Int, text(d.batch_size), R::Refused, 1,
       "batch_size", [](O& o, const V& v) { o.batch_size = as_int(v); },
       [](const O& o) { return V{o.batch_size}; }},
      {"grad-accum", "optimisation", "micro-batches per step K", T::Int, text(d.grad_accum), R::Refused, 2,
       "grad_accum", [](O& o, const V& v) { o.grad_accum = as_int(v); },
       [](const O& o) { return V{o.grad_accum}; }},
      {"lr", "optimisation", "peak learning rate (Muon's with --optimizer muon, whose default is " +
       text(kDefaultMuonLr) + ")", T::Real, text(d.schedule.lr), R::Changes, 4, "lr",
       [](O& o, const V& v) { o.schedule.lr = as_real(v); }, [](const O& o) { return V{o.schedule.lr}; }},
      {"min-lr", "optimisation", "final learning rate (default lr/10)", T::Real, "", R::Refused, 5, "min_lr",
       [](O& o, const V& v) { o.schedule.min_lr = as_real(v); }, [](const O& o) { return V{o.schedule.min_lr}; }},
      {"warmup", "optimisation",
       "linear warmup steps, lr·(s+1)/(warmup+1) as nanoGPT (cut to a shorter --max-steps)", T::Int,
       text(d.schedule.warmup), R::Refused, 6, "warmup", [](O& o, const V& v) { o.schedule.warmup = as_int(v); },
       [](const O& o) { return V{o.schedule.warmup}; }},
      {"lr-decay-steps", "optimisation", "step where the schedule reaches min-lr (default max-steps)", T::Int, "",
       R::Refused, 7, "lr_decay_steps", [](O& o, const V& v) { o.schedule.decay_steps = as_int(v); },
       [](const O& o) { return V{o.schedule.decay_steps}; }},
      {"lr-schedule", "optimisation",
       "cosine | wsd: after the warmup, cosine decay to min-lr (nanoGPT's), or warmup-stable-decay: lr held, "
       "then a straight line to min-lr over the last --lr-decay-frac of the steps",
       T::Text, lr_shape_name(d.schedule.shape), R::Refused, 22, "lr_schedule",
       [](O& o, const V& v) {
         if (!lr_shape_parse(as_text(v), &o.schedule.shape))
           throw tg::UsageError("--lr-schedule must be 'cosine' or 'wsd' (got '" + as_text(v) + "')");
       },
       [](const O& o) { return V{std::string(lr_shape_name(o.schedule.shape))}; }},
      {"lr-decay-frac", "optimisation", "with --lr-schedule wsd: the share of --lr-decay-steps spent decaying",
       T::Real, text(d.schedule.decay_frac), R::Refused, 23, "lr_decay_frac",
       [](O& o, const V& v) { o.schedule.decay_frac = as_real(v); },
       [](const O& o) { return V{o.schedule.decay_frac}; }},
      {"max-steps", "optimisation", "optimizer steps (0 = save the initial model and exit)", T::Int,
       text(d.max_steps), R::Changes, 3, "max_steps", [](O& o, const V& v) { o.max_steps = as_int(v); },
       [](const O& o) { return V{o.max_steps}; }},
      {"weight-decay", "optimisation", "decoupled weight decay on 2-D weights (AdamW's and Muon's)", T::Real, "0.1", R::Refused, 8,
       "weight_decay", [](O& o, const V& v) { o.adamw.weight_decay = static_cast<float>(as_real(v)); },
       [](const O& o) { return V{static_cast<double>(o.adamw.weight_decay)}; }},
      {"beta1", "optimisation", "AdamW beta1", T::Real, "0.9", R::Refused, 9, "beta1",
       [](O& o, const V& v) { o.adamw.beta1 = static_cast<float>(as_real(v)); },
       [](const O& o) { return V{static_cast<double>(o.adamw.beta1)}; }},
      {"beta2", "optimisation", "AdamW beta2", T::Real, "0.95", R::Refused, 10, "beta2",
       [](O& o, const V& v) { o.adamw.beta2 = static_cast<float>(as_real(v)); },
       [](const O& o) { return V{static_cast<double>(o.adamw.beta2)}; }},
      {"", "optimisation", "AdamW epsilon (saved, not a flag)", T::Real, "", R::Refused, 11, "eps",
       [](O& o, const V& v) { o.adamw.eps = static_cast<float>(as_real(v)); },
       [](const O& o) { return V{static_cast<double>(o.adamw.eps)}; }},
      {"grad-clip", "optimisation", "clip the global gradient norm (0 = off)", T::Real, "1.0", R::Refused, 12,
       "grad_clip", [](O& o, const V& v) { o.adamw.grad_clip = static_cast<float>(as_real(v)); },
       [](const O& o) { return V{static_cast<double>(o.adamw.grad_clip)}; }},
      {"seed", "optimisation", "random seed (initialisation, batches, dropout)", T::UInt,
       std::to_string(d.seed), R::Refused, 13, "seed", [](O& o, const V& v) { o.seed = static_cast<uint64_t>(as_int(v)); },
       [](const O& o) { return V{static_cast<int64_t>(o.seed)}; }},
      {"sampler", "optimisation", "random | sequential", T::Text, "random", R::Refused, 14, "sampler",
       [](O& o, const V& v) { o.sampler = as_text(v); }, [](const O& o) { return V{o.sampler}; }},
      {"eval-interval", "optimisation", "steps between validations (0 = only at the end)", T::Int,
       text(d.eval_interval), R::Changes, 15, "eval_interval", [](O& o, const V& v) { o.eval_interval = as_int(v); },
       [](const O& o) { return V{o.eval_interval}; }},
      {"eval-steps", "optimisation",
       "validation batches per evaluation, spread evenly over val.bin; the last scores all of it unless that "
       "costs over ten of these (0 = all of it every time)",
       T::Int,
       text(d.eval_steps), R::Changes, 16, "eval_steps", [](O& o, const V& v) { o.eval_steps = as_int(v); },
       [](const O& o) { return V{o.eval_steps}; }},
      {"ckpt-interval", "optimisation", "steps between checkpoints (0 = only at the end)", T::Int,
       text(d.ckpt_interval), R::Changes, 17, "ckpt_interval", [](O& o, const V& v) { o.ckpt_interval = as_int(v); },
       [](const O& o) { return V{o.ckpt_interval}; }},
      {"keep", "optimisation", "periodic ckpt-STEP.h5 files kept besides ckpt.h5 (0 = none)", T::Int,
       text(d.keep), R::Changes, 18, "keep", [](O& o, const V& v) { o.keep = as_int(v); },
       [](const O& o) { return V{o.keep}; }},
      {"optimizer", "optimisation",
       "adamw | muon: Muon for the blocks' weight matrices and AdamW for embeddings, head, gains and biases "
       "(Note [Muon] in train/optimizer.h)",
       T::Text, optimizer_name(d.optimizer), R::Restates, 19, "optimizer",
       [](O& o, const V& v) {
         if (!optimizer_parse(as_text(v), &o.optimizer))
           throw tg::UsageError("--optimizer must be 'adamw' or 'muon' (got '" + as_text(v) + "')");
       },
       [](const O& o) { return V{std::string(optimizer_name(o.optimizer))}; }},
      {"adamw-lr", "optimisation",
       "with --optimizer muon: peak learning rate of what AdamW keeps (embeddings, head, gains, biases), "
       "following --lr's schedule",
       T::Real, text(d.muon.adamw_lr), R::Refused, 20, "adamw_lr", [](O& o, const V& v) { o.muon.adamw_lr = as_real(v); },
       [](const O& o) { return V{o.muon.adamw_lr}; }},
      {"precision", "optimisation",
       "fp32 | bf16 | auto: the matmuls' operands in float32, or rounded to bf16 with float32 sums "
       "(mixed precision: weights, gradients, optimizer state, norms, softmax and loss stay float32). auto "
       "picks bf16 where oneDNN runs it natively (AVX512_BF16, AMX-BF16) and a short check finds it faster; the "
       "checkpoint records the choice and a resume keeps it",
       T::Text, d.precision, R::Restates, 26, "precision", [](O& o, const V& v) { o.precision = as_text(v); },
       [](const O& o) { return V{o.precision}; }},
      {"change-precision", "optimisation",
       "with --resume: let --precision change the precision the run was trained in", T::Switch, "", R::Changes, -1, "",
       nullptr, nullptr},
      {"muon-momentum", "optimisation", "with --optimizer muon: Muon's Nesterov momentum", T::Real,
       text(static_cast<double>(d.muon.momentum)), R::Refused, 21, "muon_momentum",
       [](O& o, const V& v) { o.muon.momentum = static_cast<float>(as_real(v)); },
       [](const O& o) { return V{static_cast<double>(o.muon.momentum)}; }},
  };
  // The model choices after the model's other flags (Note [Model choices]).
  auto at = table.begin();
  while (at != table.end() && at->group != "optimisation") ++at;
  std::vector<TrainFlag> choices;
  for (const nn::ModelChoice& row : nn::model_choices()) {
    const nn::ModelChoice* ch = &row;
    if (row.is_switch) {  // --qk-norm: present or not
      choices.push_back({row.flag, "model", row.help, T::Switch, "", R::Refused, -1, "",
                         [ch](O& o, const V& v) { ch->set(o.model, as_int(v) != 0); }, nullptr});
      continue;
    }
    choices.push_back({row.flag, "model", nn::choice_alternatives(row) + ": " + row.help, T::Text,
                       nn::choice_name(row, m), R::Refused, -1, "",
                       [ch](O& o, const V& v) {
                         if (!nn::choice_parse(*ch, as_text(v), &o.model))
                           throw tg::UsageError("--" + std::string(ch->flag) + " must be " + nn::choice_list(*ch) +
                                                " (got '" + as_text(v) + "')");
                       },
                       nullptr});
  }
  table.insert(at, choices.begin(), choices.end());
  return table;
}

// The alternative a saved flag of this type must hold.
bool holds_type(const FlagValue& v, FlagType t) {
  switch (t) {
    case FlagType::Real: return std::holds_alternative<double>(v);
    case FlagType::Text: return std::holds_alternative<std::string>(v);
    default: return std::holds_alternative<int64_t>(v);
  }
}

}  // namespace

const TrainOptions& default_options() {
  static const TrainOptions d = [] {
    TrainOptions o;
    o.model = demo_config();
    o.max_steps = 1800;
    o.schedule.lr = 3e-3;
    o.schedule.min_lr = 3e-4;
    o.schedule.warmup = 50;
    return o;
  }();
  return d;
}

const std::vector<TrainFlag>& train_flags() {
  static const std::vector<TrainFlag> table = make_table();
  return table;
}

const TrainFlag* find_train_flag(const std::string& name) {
  for (const TrainFlag& f : train_flags())
    if (!f.name.empty() && f.name == name) return &f;
  return nullptr;
}

void set_flag_from_text(const TrainFlag& f, const std::string& value, TrainOptions* o) {
  TG_CHECK(f.set != nullptr);
  const std::string bad = "--" + f.name + " must be ";
  try {
    size_t used = 0;
    switch (f.type) {
      case FlagType::Int: {
        const int64_t v = std::stoll(value, &used);
        if (used != value.size()) throw std::invalid_argument(value);
        return f.set(*o, FlagValue{v});
      }
      case FlagType::UInt: {
        const uint64_t v = std::stoull(value, &used);
        if (used != value.size()) throw std::invalid_argument(value);
        return f.set(*o, FlagValue{static_cast<int64_t>(v)});
      }
      case FlagType::Real: {
        const double v = std::stod(value, &used);
        if (used != value.size()) throw std::invalid_argument(value);
        return f.set(*o, FlagValue{v});
      }
      case FlagType::Text: return f.set(*o, FlagValue{value});
      case FlagType::Switch:
        if (!value.empty())
          throw tg::UsageError("--" + f.name + " is a switch and takes no value (got '" + value + "')");
        return f.set(*o, FlagValue{int64_t{1}});
    }
  } catch (const std::logic_error&) {  // std::invalid_argument, std::out_of_range
    throw tg::UsageError(bad + (f.type == FlagType::Real ? "a number" : "a whole number") + " (got '" + value + "')");
  }
}

void apply_train_preset(const TrainPreset& preset, const std::function<bool(const std::string&)>& given,
                        TrainOptions* o) {
  for (const auto& [name, value] : preset.flags) {
    const TrainFlag* f = find_train_flag(name);
    TG_CHECK(f != nullptr && f->set != nullptr);  // tests/train/test_train_flags.cpp walks every recipe
    if (!given(name)) set_flag_from_text(*f, value, o);
  }
  o->preset = preset.name;
}

void apply_derived_defaults(const std::function<bool(const std::string&)>& given, TrainOptions* o) {
  LrSchedule& s = o->schedule;
  if (!given("min-lr")) s.min_lr = s.lr / 10.0;
  if (!given("lr-decay-steps")) s.decay_steps = o->max_steps;
  if (s.warmup <= s.decay_steps) return;
  // The warmup yields to a short run (whose decay may then end before it
  // would have); two explicit flags that say otherwise are refused.
  if (given("warmup") && given("lr-decay-steps"))
    throw tg::UsageError("--warmup " + std::to_string(s.warmup) + " is longer than --lr-decay-steps " +
                         std::to_string(s.decay_steps) +
                         ", where the decay must already be over: lower --warmup or raise --lr-decay-steps");
  s.warmup = s.decay_steps;
}

std::vector<checkpoints::Flag> options_to_flags(const TrainOptions& o) {
  std::vector<checkpoints::Flag> flags;
  for (const TrainFlag& f : train_flags()) {
    if (f.saved_slot < 0) continue;
    if (flags.size() <= static_cast<size_t>(f.saved_slot)) flags.resize(static_cast<size_t>(f.saved_slot) + 1);
    flags[static_cast<size_t>(f.saved_slot)] = checkpoints::Flag{f.saved_as, f.get(o)};
  }
  // A slot no row fills (kept for another build's flags) is left out.
  flags.erase(std::remove_if(flags.begin(), flags.end(), [](const checkpoints::Flag& f) { return f.name.empty(); }),
              flags.end());
  return flags;
}

void options_from_flags(const std::vector<checkpoints::Flag>& flags, TrainOptions* o) {
  for (const checkpoints::Flag& saved : flags) {
    for (const TrainFlag& f : train_flags()) {
      if (f.saved_slot < 0 || f.saved_as != saved.name) continue;
      if (!holds_type(saved.value, f.type))
        throw tg::DataError("checkpoint flag '" + saved.name +
                            "' has the wrong type; the checkpoint is damaged or from another program");
      f.set(*o, saved.value);
    }
    // Unknown flags (from a newer tapegpt) are ignored.
  }
}

}  // namespace train
