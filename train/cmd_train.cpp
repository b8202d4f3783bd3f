// `tapegpt train`: start a run from prepared data, or resume one from its
// checkpoint with no other flags, writing beside that checkpoint.
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "autograd/base/errors.h"
#include "autograd/base/rng.h"
#include "checkpoints/checkpoint.h"
#include "data/tokenizer_json.h"
#include "nn/gpt.h"
#include "train/cli_util.h"
#include "train/commands.h"
#include "train/init_from.h"
#include "train/options.h"
#include "train/presets.h"
#include "train/run_dir.h"
#include "train/trainer.h"

namespace cli {

namespace {

const train::TrainOptions kDefaults = [] {
  train::TrainOptions o;
  // The demo's recipe (scripts/demo.sh): about five minutes on 2 cores for a
  // validation loss near 1.65 nats/char on Tiny Shakespeare (BENCHMARKS.md).
  o.model = train::demo_config();
  o.max_steps = 1800;
  o.schedule.lr = 3e-3;
  o.schedule.min_lr = 3e-4;
  o.schedule.warmup = 50;
  return o;
}();

// Flags that may change when resuming; every other one is fixed by the run.
const std::set<std::string> kResumeOverrides = {
    "resume", "max-steps", "out", "threads", "lr", "eval-interval", "eval-steps",
    "ckpt-interval", "keep", "overwrite", "allow-data-change", "no-overlap", "help"};

void add_options(cxxopts::Options& opts) {
  const train::TrainOptions& d = kDefaults;
  const nn::GPTConfig& m = d.model;
  auto s = [](auto v) { return std::to_string(v); };
  auto f = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  opts.add_options("run")
      ("data", "prepared data directory (train.bin, val.bin, tokenizer.json)", cxxopts::value<std::string>())
      ("out", "run directory for ckpt.h5, best.h5, metrics.jsonl", cxxopts::value<std::string>())
      ("resume", "continue the run saved in this checkpoint", cxxopts::value<std::string>())
      ("init-from", "start a new run from this checkpoint's weights (e.g. an imported GPT-2): fresh "
       "optimizer, step 0; the shape comes from it, --block-size may crop it", cxxopts::value<std::string>())
      ("allow-data-change", "with --resume: accept token files that differ from the run's")
      ("overwrite", "write into a directory that holds another run: that run's checkpoints and "
                    "metrics.jsonl are replaced once the new run logs its first step")
      ("no-overlap", "under mpirun: sum the gradients across processes after the backward pass, "
                     "not block by block during it (same result; for measuring)");
  add_common_options(opts);
  opts.add_options("model")
      ("n-layer", "transformer blocks", cxxopts::value<int64_t>()->default_value(s(m.n_layer)))
      ("n-head", "attention heads per block", cxxopts::value<int64_t>()->default_value(s(m.n_head)))
      ("n-embd", "embedding width (a multiple of --n-head)", cxxopts::value<int64_t>()->default_value(s(m.n_embd)))
      ("block-size", "context length T", cxxopts::value<int64_t>()->default_value(s(m.block_size)))
      ("dropout", "dropout probability while training: embeddings, attention probabilities, residual branches (nanoGPT's)",
       cxxopts::value<double>()->default_value("0"))
      ("gelu", "tanh (GPT-2's) | erf (PyTorch's nn.GELU(), nanoGPT's current model)",
       cxxopts::value<std::string>()->default_value("tanh"))
      ("no-bias", "no biases in linear layers and LayerNorms")
      ("untied", "separate lm_head instead of the token embedding")
      ("pos-encoding", "learned | sinusoidal", cxxopts::value<std::string>()->default_value("learned"));
  opts.add_options("optimisation")
      ("batch-size", "sequences per micro-batch B", cxxopts::value<int64_t>()->default_value(s(d.batch_size)))
      ("grad-accum", "micro-batches per step K", cxxopts::value<int64_t>()->default_value(s(d.grad_accum)))
      ("lr", "peak learning rate", cxxopts::value<double>()->default_value(f(d.schedule.lr)))
      ("min-lr", "final learning rate (default lr/10)", cxxopts::value<double>())
      ("warmup", "linear warmup steps, lr·(s+1)/(warmup+1) as nanoGPT (cut to a shorter --max-steps)",
       cxxopts::value<int64_t>()->default_value(s(d.schedule.warmup)))
      ("lr-decay-steps", "step where the cosine reaches min-lr (default max-steps)", cxxopts::value<int64_t>())
      ("max-steps", "optimizer steps (0 = save the initial model and exit)", cxxopts::value<int64_t>()->default_value(s(d.max_steps)))
      ("weight-decay", "AdamW decoupled weight decay on 2-D weights", cxxopts::value<double>()->default_value("0.1"))
      ("beta1", "AdamW beta1", cxxopts::value<double>()->default_value("0.9"))
      ("beta2", "AdamW beta2", cxxopts::value<double>()->default_value("0.95"))
      ("grad-clip", "clip the global gradient norm (0 = off)", cxxopts::value<double>()->default_value("1.0"))
      ("seed", "random seed (initialisation, batches, dropout)", cxxopts::value<uint64_t>()->default_value(s(d.seed)))
      ("sampler", "random | sequential", cxxopts::value<std::string>()->default_value("random"))
      ("eval-interval", "steps between validations (0 = only at the end)", cxxopts::value<int64_t>()->default_value(s(d.eval_interval)))
      ("eval-steps", "validation batches per evaluation", cxxopts::value<int64_t>()->default_value(s(d.eval_steps)))
      ("ckpt-interval", "steps between checkpoints (0 = only at the end)", cxxopts::value<int64_t>()->default_value(s(d.ckpt_interval)))
      ("keep", "periodic ckpt-STEP.h5 files kept besides ckpt.h5 (0 = none)", cxxopts::value<int64_t>()->default_value(s(d.keep)));
}

train::TrainOptions options_from_flags(const cxxopts::ParseResult& r) {
  train::TrainOptions o = kDefaults;
  if (!r.count("data")) throw tg::UsageError("--data DIR is required (a directory made by 'tapegpt prepare')");
  if (!r.count("out")) throw tg::UsageError("--out RUNDIR is required (where checkpoints and metrics go)");
  o.data_dir = get<std::string>(r, "data");
  o.out_dir = get<std::string>(r, "out");
  o.model.n_layer = get<int64_t>(r, "n-layer");
  o.model.n_head = get<int64_t>(r, "n-head");
  o.model.n_embd = get<int64_t>(r, "n-embd");
  o.model.block_size = get<int64_t>(r, "block-size");
  o.model.dropout = static_cast<float>(get<double>(r, "dropout"));
  o.model.bias = !r.count("no-bias");
  o.model.tied = !r.count("untied");
  const std::string pos = get<std::string>(r, "pos-encoding");
  if (!nn::pos_encoding_parse(pos, &o.model.pos_encoding))
    throw tg::UsageError("--pos-encoding must be 'learned' or 'sinusoidal' (got '" + pos + "')");
  const std::string gelu = get<std::string>(r, "gelu");
  if (!nn::gelu_parse(gelu, &o.model.gelu))
    throw tg::UsageError("--gelu must be 'tanh' or 'erf' (got '" + gelu + "')");
  o.batch_size = get<int64_t>(r, "batch-size");
  o.grad_accum = get<int64_t>(r, "grad-accum");
  o.max_steps = get<int64_t>(r, "max-steps");
  o.schedule.lr = get<double>(r, "lr");
  o.schedule.min_lr = r.count("min-lr") ? get<double>(r, "min-lr") : o.schedule.lr / 10.0;
  o.schedule.warmup = get<int64_t>(r, "warmup");
  o.schedule.decay_steps = r.count("lr-decay-steps") ? get<int64_t>(r, "lr-decay-steps") : o.max_steps;
  if (o.schedule.warmup > o.schedule.decay_steps) {
    // Two explicit flags that contradict each other are refused; otherwise
    // the warmup yields to a short run (the decay then defaults to
    // --max-steps, which may be below the warmup).
    if (r.count("warmup") && r.count("lr-decay-steps"))
      throw tg::UsageError("--warmup " + std::to_string(o.schedule.warmup) + " is longer than --lr-decay-steps " +
                           std::to_string(o.schedule.decay_steps) +
                           ", where the decay must already be over: lower --warmup or raise --lr-decay-steps");
    o.schedule.warmup = o.schedule.decay_steps;
  }
  o.adamw.weight_decay = static_cast<float>(get<double>(r, "weight-decay"));
  o.adamw.beta1 = static_cast<float>(get<double>(r, "beta1"));
  o.adamw.beta2 = static_cast<float>(get<double>(r, "beta2"));
  o.adamw.grad_clip = static_cast<float>(get<double>(r, "grad-clip"));
  o.seed = get<uint64_t>(r, "seed");
  o.sampler = get<std::string>(r, "sampler");
  o.eval_interval = get<int64_t>(r, "eval-interval");
  o.eval_steps = get<int64_t>(r, "eval-steps");
  o.ckpt_interval = get<int64_t>(r, "ckpt-interval");
  o.keep = get<int64_t>(r, "keep");
  o.threads = get<int>(r, "threads");
  o.overlap_allreduce = !r.count("no-overlap");
  return o;
}

int start_run(const cxxopts::ParseResult& r) {
  train::TrainOptions o = options_from_flags(r);
  // Never replace a run the user already has by accident.
  if (!r.count("overwrite") && train::holds_run(o.out_dir))
    throw tg::UsageError(o.out_dir + " already holds a run (ckpt.h5): continue it with --resume " +
                         o.out_dir + "/ckpt.h5, choose another --out, or pass --overwrite to start over");
  o.replace_run = true;  // a new run: fresh metrics.jsonl, no files of an old one
  const data::Tokenizer tokenizer = data::load_tokenizer_dir(o.data_dir);
  o.model.vocab_size = tokenizer.vocab_size();
  const std::string err = train::options_error(o);
  if (!err.empty()) throw tg::UsageError(err);
  set_threads(o.threads);
  nn::GPT model = nn::gpt_create(o.model);
  nn::gpt_init(model, o.seed);
  train::RunState state;
  state.rng_state = tg::Rng(o.seed ^ 0x7261696eULL).state();  // "rain": a stream apart from init
  state.run_id = train::new_run_id();
  return train::run_training(o, model, tokenizer.spec(), state, false, "", false);
}

int resume_run(const cxxopts::ParseResult& r) {
  for (const auto& kv : r.arguments())
    if (!kResumeOverrides.count(kv.key()))
      throw tg::UsageError("--" + kv.key() + " cannot be changed when resuming: the run keeps the value "
                           "saved in its checkpoint (remove the flag, or start a new run)");
  const std::string path = get<std::string>(r, "resume");
  checkpoints::Loaded ck = checkpoints::load_checkpoint(path, true);
  if (!ck.has_optimizer)
    throw tg::DataError(path + " holds no optimizer state (a best.h5 is model-only); resume from the run's ckpt.h5");
  train::TrainOptions o = kDefaults;
  o.model = ck.meta.config;
  train::options_from_flags(ck.meta.train.flags, &o);
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
  if (r.count("max-steps")) o.max_steps = get<int64_t>(r, "max-steps");
  if (r.count("lr")) {
    o.schedule.lr = get<double>(r, "lr");
    o.schedule.min_lr = std::min(o.schedule.min_lr, o.schedule.lr);
  }
  if (r.count("eval-interval")) o.eval_interval = get<int64_t>(r, "eval-interval");
  if (r.count("eval-steps")) o.eval_steps = get<int64_t>(r, "eval-steps");
  if (r.count("ckpt-interval")) o.ckpt_interval = get<int64_t>(r, "ckpt-interval");
  if (r.count("keep")) o.keep = get<int64_t>(r, "keep");
  o.threads = get<int>(r, "threads");
  o.overlap_allreduce = !r.count("no-overlap");
  const std::string err = train::options_error(o);
  if (!err.empty()) throw tg::UsageError(err);
  const int64_t step = ck.meta.train.step;
  if (step >= o.max_steps)
    throw tg::UsageError("the run in " + path + " already finished (step " + std::to_string(step) +
                         " of max_steps " + std::to_string(o.max_steps) +
                         "); pass --max-steps N with N > " + std::to_string(step) + " to train further");
  set_threads(o.threads);
  nn::GPT model = nn::gpt_create(o.model);
  model.store = std::move(ck.store);
  nn::gpt_bind_views(model);
  train::RunState state;
  state.step = step;
  state.tokens_seen = ck.meta.train.tokens_seen;
  state.rng_state = ck.meta.train.rng_state;
  state.sampler_position = ck.meta.train.sampler_position;
  state.best_val_loss = ck.meta.train.best_val_loss;
  // Files from before format_version 2 carry no run id: the run gets one now.
  state.run_id = ck.meta.train.run_id.empty() ? train::new_run_id() : ck.meta.train.run_id;
  return train::run_training(o, model, ck.meta.tokenizer, state, true, ck.meta.train.data_hash,
                             r.count("allow-data-change") > 0);
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
  if (r.count("init-from")) return init_from_run(r, options_from_flags(r));
  return r.count("resume") ? resume_run(r) : start_run(r);
}

}  // namespace cli
