// The training loop (see trainer.h).
#include "train/trainer.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "autograd/base/atomic_file.h"
#include "autograd/base/errors.h"
#include "autograd/base/fnv.h"
#include "autograd/base/rng.h"
#include "autograd/kernels/blas_setup.h"
#include "checkpoints/checkpoint.h"
#include "data/token_file.h"
#include "train/budget/duration.h"
#include "train/budget/guard.h"
#include "train/distributed/distributed.h"
#include "train/evaluate.h"
#include "train/distributed/data_parallel.h"
#include "train/metrics.h"
#include "train/distributed/optimizer_shard.h"
#include "train/peak_flops.h"
#include "train/precision.h"
#include "train/run_dir.h"
#include "train/token_batches.h"
#include "train/train_flags.h"
#include "train/train_step.h"

namespace train {

namespace {

// Set by SIGINT/SIGTERM; the loop finishes its step, checkpoints and exits.
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// "nan", "inf" or the number: printf's %g writes "-nan" for some NaNs.
std::string finite_or_name(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// " (2 processes, all-reduce 12% of the step)" with several ranks, else "".
std::string ranks_and_wait(int ranks, double reduce_share) {
  if (ranks == 1) return "";
  char buf[80];
  std::snprintf(buf, sizeof buf, " (%d processes, all-reduce %.0f%% of the step)", ranks, 100.0 * reduce_share);
  return buf;
}

std::string mib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

class Trainer {
 public:
  Trainer(const TrainOptions& o, nn::GPT& model, const data::TokenizerSpec& tokenizer,
          checkpoints::TrainState state, Distributed& dist)
      : o_(o),
        model_(model),
        tokenizer_(tokenizer),
        state_(std::move(state)),
        train_file_(o.data_dir + "/train.bin"),
        val_file_(o.data_dir + "/val.bin"),
        step_(model, StepShape{o.batch_size, model.config.block_size, o.grad_accum}),
        dist_(dist) {
    if (dist.size() > 1) {  // Note [Data parallelism]
      if (o.shard_optimizer) {  // Note [Sharded optimizer state]
        shard_ = std::make_unique<OptimizerShard>(dist, model.store);
        step_.set_optimizer_shard(shard_.get());
      }
      data_parallel_ = std::make_unique<DataParallelReducer>(dist, model.store, o.overlap_allreduce,
                                                             shard_ ? shard_->shard_floats() : 0);
      step_.set_gradient_reducer(data_parallel_.get());
    }
    if (!shard_ && model.store.m.size() < model.store.total) {  // --shard-optimizer in one process
      model.store.m.resize(model.store.total);
      model.store.v.resize(model.store.total);
    }
    if (o.optimizer == OptimizerKind::Muon) {  // Note [Muon]; options_error refused a shard
      muon_ = std::make_unique<Muon>(model.store, o.muon, o.schedule.lr);
      step_.set_muon(muon_.get());
    }
    const int64_t V = model.config.vocab_size, T = model.config.block_size;
    for (const data::TokenFile* f : {&train_file_, &val_file_})
      if (f->vocab_size() > V)
        throw tg::DataError(f->path() + " uses a vocabulary of " + std::to_string(f->vocab_size()) +
                            " tokens but the model has " + std::to_string(V) +
                            "; prepare the data with the model's tokenizer");
    batches_ = std::make_unique<TokenFileBatches>(train_file_, o.sampler, o.batch_size, T,
                                                  state_.sampler_position);
    if (val_file_.size() < 2)
      throw tg::DataError(val_file_.path() + " has fewer than 2 tokens; prepare with a larger --val-fraction");
    rng_.set_state(state_.rng_state);
  }

  std::string data_hash() const { return train_file_.hash() + ":" + val_file_.hash(); }

  int run(bool resumed);

 private:
  double train_step();
  EvalResult validate(bool whole);
  std::string eval_text() const;
  void keep_to_budget(BudgetGuard* guard, MetricsLog* metrics);
  // Seconds on the run's clock: since the command began, plus, for a
  // --budget run, the budget spent before this process resumed it (Note
  // [Budget everywhere] in budget/plan.h).
  double clock() const { return spent_before_ + o_.seconds_before_loop + seconds_since(t_start_); }
  void save(const std::string& path, bool with_optimizer, checkpoints::MomentSource* moments = nullptr);
  void save_full();
  void save_full_sharded();
  void verify_replicas();
  std::string divergence_advice() const;
  std::string ckpt_path() const { return o_.out_dir + "/ckpt.h5"; }

  // A copy: --budget's guard may revise max_steps and the schedule's end.
  TrainOptions o_;
  nn::GPT& model_;
  const data::TokenizerSpec& tokenizer_;
  checkpoints::TrainState state_;
  data::TokenFile train_file_, val_file_;
  std::unique_ptr<TokenFileBatches> batches_;
  tg::Rng rng_;
  TrainStep step_;
  double last_grad_norm_ = 0.0;
  Distributed& dist_;
  int nonfinite_rank_ = 0;  // the first rank whose own loss was not finite
  std::unique_ptr<DataParallelReducer> data_parallel_;  // with several processes only
  std::unique_ptr<OptimizerShard> shard_;                // with --shard-optimizer and several processes
  std::unique_ptr<Muon> muon_;                           // with --optimizer muon
  std::chrono::steady_clock::time_point t_start_ = std::chrono::steady_clock::now();  // the loop's start
  double spent_before_ = o_.budget_spent_s;  // the run's clock when this process took it up
};

// One optimizer step (train_step.cpp) at the schedule's learning rate, then
// the run's bookkeeping; returns the mean loss, NaN when it diverged.
double Trainer::train_step() {
  const float lr = static_cast<float>(lr_at(o_.schedule, state_.step));
  const StepResult r = step_.run(*batches_, rng_, o_.adamw, lr, state_.step + 1);
  last_grad_norm_ = r.grad_norm;
  if (!r.applied) {
    if (data_parallel_) nonfinite_rank_ = data_parallel_->first_nonfinite_rank();  // all ranks are here
    return NAN;
  }
  state_.step += 1;
  state_.tokens_seen += tokens_per_step(o_);
  state_.sampler_position = batches_->position();
  state_.rng_state = rng_.state();
  return r.loss;
}

// The validation split's loss: the whole split, or --eval-steps batches of
// windows spread evenly over it (Note [Spread evaluation]).
EvalResult Trainer::validate(bool whole) {
  TokenSource source{val_file_.size(), [this](int32_t* dst, int64_t start, int64_t n) {
                       val_file_.copy(dst, start, n);
                     }};
  EvalOptions eo;
  eo.batch_size = o_.batch_size;
  eo.max_windows = whole ? 0 : o_.eval_steps * o_.batch_size;
  return evaluate_tokens(model_, source, eo, step_.arena());
}

// What an evaluation scores, for the run's header.
std::string Trainer::eval_text() const {
  const int64_t split = count_eval_windows(val_file_.size(), model_.config.block_size);
  const int64_t partial = o_.eval_steps * o_.batch_size;
  if (o_.eval_steps == 0 || partial >= split)
    return "the whole validation split (" + std::to_string(split) + " windows)";
  return std::to_string(partial) + " of the validation split's " + std::to_string(split) +
         " windows, spread evenly over it (an estimate of its loss); the last evaluation " +
         (final_eval_is_whole(partial, split) ? "scores all of them" : "too, as the split is large");
}

void Trainer::save(const std::string& path, bool with_optimizer, checkpoints::MomentSource* moments) {
  if (!dist_.root()) return;  // rank 0 alone writes the run's files
  if (!o_.budget.empty()) o_.budget_spent_s = clock();  // a resume continues the budget's clock from here
  checkpoints::Checkpoint meta;
  meta.config = model_.config;
  meta.train = state_;
  meta.train.seed = o_.seed;
  meta.train.data_hash = data_hash();
  meta.train.run_dir = o_.out_dir;
  meta.train.flags = options_to_flags(o_);
  meta.optimizer.name = optimizer_name(o_.optimizer);
  meta.optimizer.step = state_.step;
  meta.optimizer.lr = lr_at(o_.schedule, std::max<int64_t>(0, state_.step - 1));
  meta.optimizer.beta1 = o_.adamw.beta1;
  meta.optimizer.beta2 = o_.adamw.beta2;
  meta.optimizer.eps = o_.adamw.eps;
  meta.optimizer.weight_decay = o_.adamw.weight_decay;
  meta.tokenizer = tokenizer_;
  const nn::JoinedMasters joined(model_.store);  // a file holds float32 masters
  checkpoints::save_checkpoint(path, meta, model_.store, with_optimizer, moments);
}

// Note [Periodic checkpoints]: ckpt.h5 is saved first (atomically), so it is
// always the newest complete state; then, with --keep N > 0, it gets a second
// name ckpt-STEP.h5 (a hard link: no copy, no extra space), and only then are
// periodic files beyond the newest N deleted, oldest first. A kill at any
// point leaves ckpt.h5 complete and at least the N newest periodic files.
void Trainer::save_full() {
  verify_replicas();
  if (shard_) return save_full_sharded();
  if (dist_.root()) {
    save(ckpt_path(), true);
    if (o_.keep > 0) {
      const std::string periodic = o_.out_dir + "/" + periodic_name(state_.step);
      // Without hard links (some network or FAT filesystems) save it again.
      if (!tg::link_atomically(ckpt_path(), periodic)) save(periodic, true);
      prune_periodic(o_.out_dir, o_.keep, state_.step);
    }
  }
}

// The same with sharded moments (Note [Sharded optimizer state]): rank 0
// gathers each whole moment as it writes it, and every other rank sends its
// slice in the same two gathers, m then v, once for each file saved.
void Trainer::save_full_sharded() {
  struct Gathered : checkpoints::MomentSource {
    OptimizerShard& shard;
    nn::ParameterStore& store;
    Gathered(OptimizerShard& sh, nn::ParameterStore& st) : shard(sh), store(st) {}
    const float* moment(int which) override { return shard.gather_moment(store, which); }
  } moments(*shard_, model_.store);
  const auto save_or_send = [&](const std::string& path) {
    if (dist_.root()) return save(path, true, &moments);
    moments.moment(0);
    moments.moment(1);
  };
  save_or_send(ckpt_path());
  const std::string periodic = o_.out_dir + "/" + periodic_name(state_.step);
  // Without hard links (some network or FAT filesystems) rank 0 saves it
  // again, so every rank gathers again.
  if (o_.keep > 0 && dist_.any(dist_.root() && !tg::link_atomically(ckpt_path(), periodic)))
    save_or_send(periodic);
  if (o_.keep > 0 && dist_.root()) prune_periodic(o_.out_dir, o_.keep, state_.step);
  shard_->release_moments(model_.store);
}

// Every rank must hold the same weights and moments (Note [Data
// parallelism]): their checksums are compared before rank 0 saves them.
// Sharded, each rank holds other moments: only the weights are compared.
void Trainer::verify_replicas() {
  if (dist_.size() == 1) return;
  const nn::ParameterStore& s = model_.store;
  const uint64_t params = checksum_words(s.values.words(), s.total);
  const uint64_t sum =
      shard_ ? params : checksum_floats(s.v.data(), s.total, checksum_floats(s.m.data(), s.total, params));
  const int other = dist_.first_rank_differing(sum);
  if (other >= 0 && dist_.root())
    throw tg::DataError("the weights or AdamW moments of rank " + std::to_string(other) +
                        " differ from rank 0's at step " + std::to_string(state_.step) +
                        " (the ranks no longer apply the same updates); nothing was saved over the "
                        "last checkpoint, resume from it");
}

// Where to go back to after a divergence: the periodic checkpoints of this
// continuation, newest first, else ckpt.h5, else nothing yet.
std::string Trainer::divergence_advice() const {
  std::vector<std::string> good;
  for (const auto& f : periodic_checkpoints(o_.out_dir))
    if (f.first <= state_.step) good.insert(good.begin(), f.second);
  if (good.empty() && std::filesystem::exists(ckpt_path())) good.push_back(ckpt_path());
  if (good.empty() && !o_.resumed_from.empty()) good.push_back(o_.resumed_from);
  if (good.empty()) return "no checkpoint was saved yet; start again with a lower --lr";
  std::string s = "nothing was saved over the last good checkpoint " + good[0];
  if (good.size() > 1) {
    s += " (earlier:";
    for (size_t i = 1; i < good.size(); ++i) s += " " + good[i];
    s += ")";
  }
  return s + ". Resume from it with a lower learning rate: tapegpt train --resume " + good[0] +
         " --lr <smaller>";
}

// Note [Budget guard]: the step count moves to end on time; the schedule's
// end moves with it where the plan set it to the last step. Rank 0's guard
// decides for the job: every rank applies its count before the next step.
void Trainer::keep_to_budget(BudgetGuard* guard, MetricsLog* metrics) {
  std::string why;
  int64_t end = guard ? guard->revise(state_.step, o_.max_steps, o_.schedule, clock(), &why) : o_.max_steps;
  end = static_cast<int64_t>(dist_.from_root(static_cast<double>(end)));
  if (end == o_.max_steps) return;
  if (o_.schedule.decay_steps == o_.max_steps) o_.schedule.decay_steps = end;
  o_.schedule.warmup = std::min(o_.schedule.warmup, o_.schedule.decay_steps);
  o_.max_steps = end;
  if (metrics) metrics->log_revision(state_.step, end, why);
  std::printf("budget: step %lld: %s\n", static_cast<long long>(state_.step), why.c_str());
  std::fflush(stdout);
}

int Trainer::run(bool resumed) {
  const nn::GPTConfig& c = model_.config;
  // Rank 0 alone writes the run's files; the others' stdout is /dev/null.
  const bool root = dist_.root();
  if (root) std::filesystem::create_directories(o_.out_dir);
  std::unique_ptr<MetricsLog> metrics;
  if (root) metrics = std::make_unique<MetricsLog>(o_.out_dir + "/metrics.jsonl", o_.replace_run);
  bool old_run_retired = !o_.replace_run || !root;

  const MemoryEstimate mem = estimate_memory(model_, o_.batch_size);
  std::printf("model: %lld parameters (%lld layers, %lld heads, %lld wide, context %lld, vocab %lld)\n",
              static_cast<long long>(model_.num_parameters()), static_cast<long long>(c.n_layer),
              static_cast<long long>(c.n_head), static_cast<long long>(c.n_embd),
              static_cast<long long>(c.block_size), static_cast<long long>(c.vocab_size));
  std::printf("memory estimate: %s (parameters %s, gradients %s, AdamW moments %s, activations %s)\n",
              mib(mem.total()).c_str(), mib(mem.parameters).c_str(), mib(mem.gradients).c_str(),
              mib(mem.moments).c_str(), mib(mem.activations).c_str());
  std::printf("data: %lld train tokens, %lld val tokens; %lld tokens per step; %d threads\n",
              static_cast<long long>(train_file_.size()), static_cast<long long>(val_file_.size()),
              static_cast<long long>(tokens_per_step(o_)), omp_get_max_threads());
  std::printf("OpenBLAS: %s\n", kernels::blas_description().c_str());
  std::printf("precision: %s (%s)\n", o_.precision.c_str(), o_.precision_reason.c_str());
  std::printf("validation: %s\n", eval_text().c_str());
  if (dist_.size() > 1)
    std::printf("data parallel: %d processes, %lld micro-batches of %lld sequences each per step\n",
                dist_.size(), static_cast<long long>(o_.grad_accum / dist_.size()),
                static_cast<long long>(o_.batch_size));

  if (o_.max_steps == 0 && !resumed) {
    // No row will be logged: the old run's files, its log included, go now.
    if (root) {
      retire_old_run(o_.out_dir, o_.resumed_from);
      std::filesystem::remove(o_.out_dir + "/metrics.jsonl");
    }
    save_full();
    std::printf("--max-steps 0: wrote the initialised model to %s\n", ckpt_path().c_str());
    return 0;
  }
  if (resumed) std::printf("resuming at step %lld of %lld\n", static_cast<long long>(state_.step),
                           static_cast<long long>(o_.max_steps));
  if (resumed && !o_.budget.empty()) {
    if (o_.budget_deadline_s > 0)
      std::printf("budget: %s of the %s budget spent before this resume (the time no process ran not counted); the "
                  "guard keeps the run within the rest\n",
                  format_duration(o_.budget_spent_s).c_str(), o_.budget.c_str());
    else
      std::printf("budget: the --budget %s plan continues to step %lld with no guard (--max-steps given, or a run "
                  "saved before tapegpt kept the budget's clock)\n",
                  o_.budget.c_str(), static_cast<long long>(o_.max_steps));
  }
  std::fflush(stdout);

  const double peak = measure_sgemm_peak_flops();
  const double flops_per_token = nn::training_flops_per_token(c);
  ProgressLine progress;
  StopSignals signals;
  t_start_ = std::chrono::steady_clock::now();
  // Rank 0's guard decides for every rank (keep_to_budget).
  const bool guarded = o_.budget_deadline_s > 0;
  std::unique_ptr<BudgetGuard> guard;
  if (guarded && root) guard = std::make_unique<BudgetGuard>(o_.budget_deadline_s, o_.budget_hard_deadline_s);
  // The plan's row goes just before the first step's, which replaces an
  // old run's log (MetricsLog's `fresh`): never earlier.
  bool plan_logged = o_.budget.empty() || resumed;
  double tokens_per_s = 0.0, reduce_share = 0.0;
  bool saved_at_step = false, stop = false;

  while (state_.step < o_.max_steps) {
    // Every rank stops after the same step, whichever got the signal.
    if ((stop = dist_.any(g_stop_signal != 0))) break;
    const auto t0 = std::chrono::steady_clock::now();
    const double loss = train_step();
    if (!std::isfinite(loss)) {
      progress.clear();
      if (!root) return 1;  // rank 0 reports it
      const std::string where = dist_.size() > 1 && nonfinite_rank_ < dist_.size()
                                    ? " first on rank " + std::to_string(nonfinite_rank_)
                                    : "";
      std::fprintf(stderr,
                   "tapegpt train: error: the loss or gradient became non-finite at step %lld%s "
                   "(loss %s, grad norm %s); %s\n",
                   static_cast<long long>(state_.step + 1), where.c_str(), finite_or_name(loss).c_str(),
                   finite_or_name(last_grad_norm_).c_str(), divergence_advice().c_str());
      return 1;
    }
    const double dt = seconds_since(t0);
    state_.train_seconds += dt;  // the step alone: evaluations and saves below are not counted
    const double rate = static_cast<double>(tokens_per_step(o_)) / dt;
    const bool first = tokens_per_s == 0.0;
    tokens_per_s = first ? rate : 0.9 * tokens_per_s + 0.1 * rate;
    const double reduce_s = dist_.take_reduce_seconds();
    reduce_share = first ? reduce_s / dt : 0.9 * reduce_share + 0.1 * reduce_s / dt;
    const double elapsed = clock();
    if (metrics && !plan_logged) metrics->log_plan(parse_duration_seconds(o_.budget, "budget"), o_.budget_plan);
    plan_logged = true;
    if (metrics)
      metrics->log_step(state_.step, loss, lr_at(o_.schedule, state_.step - 1), last_grad_norm_, rate,
                        elapsed, state_.train_seconds, dist_.size(), reduce_s);
    if (!old_run_retired) {  // the new metrics.jsonl is in place: the old run goes
      retire_old_run(o_.out_dir, o_.resumed_from);
      old_run_retired = true;
    }
    const double eta = static_cast<double>(o_.max_steps - state_.step) *
                       static_cast<double>(tokens_per_step(o_)) / tokens_per_s;
    progress.update(state_.step, o_.max_steps, loss, tokens_per_s,
                    tokens_per_s * flops_per_token / peak, eta, dist_.size(), reduce_share);
    if (!progress.enabled() && (state_.step % 100 == 0 || state_.step == 1)) {
      std::printf("step %lld/%lld loss %.4f %.0f tok/s%s\n", static_cast<long long>(state_.step),
                  static_cast<long long>(o_.max_steps), loss, tokens_per_s,
                  ranks_and_wait(dist_.size(), reduce_share).c_str());
      std::fflush(stdout);
    }
    if (guarded) keep_to_budget(guard.get(), metrics.get());
    saved_at_step = false;
    if ((o_.eval_interval > 0 && state_.step % o_.eval_interval == 0) || state_.step == o_.max_steps) {
      // The last evaluation scores the whole split where that is cheap
      // enough, so a run ends on the loss `tapegpt eval` prints.
      const bool last = state_.step == o_.max_steps;
      const EvalResult r = validate(last && final_eval_is_whole(o_.eval_steps * o_.batch_size,
                                                                count_eval_windows(val_file_.size(), c.block_size)));
      const double val = r.mean_loss();
      if (metrics) metrics->log_eval(state_.step, val, clock(), state_.train_seconds, r.whole());
      const bool best = val < state_.best_val_loss;
      if (best) state_.best_val_loss = val;
      progress.clear();
      std::string note = best ? "best" : "";
      if (last && o_.eval_steps > 0)
        note += std::string(note.empty() ? "" : "; ") +
                (r.whole() ? "the whole split"
                           : "an estimate from " + std::to_string(r.windows) + " of " +
                                 std::to_string(r.split_windows) + " windows; tapegpt eval scores them all");
      std::printf("step %lld: val loss %.4f%s\n", static_cast<long long>(state_.step), val,
                  note.empty() ? "" : (" (" + note + ")").c_str());
      std::fflush(stdout);
      if (best) save(o_.out_dir + "/best.h5", false);
    }
    if (o_.ckpt_interval > 0 && state_.step % o_.ckpt_interval == 0) {
      save_full();
      saved_at_step = true;
    }
  }
  progress.clear();
  if (!saved_at_step) save_full();
  if (stop && state_.step < o_.max_steps) {
    std::printf("stopped by signal at step %lld; checkpoint saved. Resume with: tapegpt train --resume %s\n",
                static_cast<long long>(state_.step), ckpt_path().c_str());
    return 0;
  }
  std::printf("done: %lld steps, %lld tokens in %s; checkpoint %s\n",
              static_cast<long long>(state_.step), static_cast<long long>(state_.tokens_seen),
              format_duration(clock()).c_str(), ckpt_path().c_str());
  return 0;
}

// What every rank must agree on before the first step: data, flags, run
// state and weights.
uint64_t run_fingerprint(const std::string& data_hash, const TrainOptions& o, const checkpoints::TrainState& state,
                         const nn::GPT& model) {
  std::string text = data_hash + "|" + std::to_string(state.step) + "|" +
                     std::to_string(state.sampler_position);
  for (uint64_t w : state.rng_state) text += "|" + std::to_string(w);
  // Choices that leave the parameter table alike (--mlp relu2 or gelu) show
  // in no weight checksum.
  text += o.shard_optimizer ? "|sharded" : "|whole";  // every rank takes part in the same collectives
  for (const nn::ModelChoice& row : nn::model_choices())
    text += "|" + std::string(row.key) + "=" + nn::choice_name(row, o.model);
  for (const checkpoints::Flag& f : options_to_flags(o)) {
    // The budget's clock is rank 0's to read (a resumed rank on another
    // machine may not see the run's log): Note [Budget everywhere].
    if (f.name == "budget_spent_s") continue;
    text += "|" + f.name + "=" + std::visit([](const auto& v) {
              if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) return v;
              else return std::to_string(v);
            }, f.value);
  }
  return checksum_words(model.store.values.words(), model.store.total, tg::fnv1a(text.data(), text.size()));
}

}  // namespace

MemoryEstimate estimate_memory(const nn::GPT& model, int64_t B) {
  const nn::GPTConfig& c = model.config;
  MemoryEstimate m;
  m.parameters = model.store.total * 4;
  m.gradients = m.parameters;
  m.moments = 2 * m.parameters;
  m.activations = nn::gpt_training_plan(model, B, c.block_size).total_floats * 4;
  return m;
}

checkpoints::TrainState new_run_state(uint64_t seed) {
  checkpoints::TrainState s;
  s.rng_state = tg::Rng(seed ^ 0x7261696eULL).state();  // "rain": a stream apart from init
  s.best_val_loss = std::numeric_limits<double>::infinity();
  s.run_id = new_run_id();
  return s;
}

int run_training(const TrainOptions& options, nn::GPT& model,
                 const data::TokenizerSpec& tokenizer, checkpoints::TrainState state, bool resumed,
                 bool allow_data_change, Distributed& dist) {
  const std::string resumed_data_hash = state.data_hash;
  dist.set_stall_timeout(options.stall_timeout_s);
  if (options.threads == 0 && dist.local_size() > 1) {
    // Ranks on one machine share its cores, unless --threads says otherwise.
    const int threads = std::max(1, omp_get_num_procs() / dist.local_size());
    omp_set_num_threads(threads);
    kernels::set_blas_threads(threads);
  }
  // The matmuls' precision, before the step plans its memory (the bf16
  // linear keeps other buffers): Note [bf16 linear].
  TG_CHECK(options.precision == "fp32" || options.precision == "bf16");  // resolved by the command
  set_precision(model.store, precision_of_saved(options.precision));
  std::unique_ptr<Trainer> trainer;
  const bool agreed = dist.agree_setup([&] {
    if (options.grad_accum % dist.size() != 0)
      throw tg::UsageError("--grad-accum " + std::to_string(options.grad_accum) + " is not a multiple of the " +
                           std::to_string(dist.size()) + " processes: each runs an equal share of a " +
                           "step's micro-batches; change --grad-accum or mpirun's -np");
    trainer = std::make_unique<Trainer>(options, model, tokenizer, state, dist);
    if (resumed && trainer->data_hash() != resumed_data_hash && !allow_data_change)
      throw tg::UsageError("the token files in " + options.data_dir +
                           " differ from the ones this run was trained on; pass --allow-data-change "
                           "to resume on the new data anyway");
    return run_fingerprint(trainer->data_hash(), options, state, model);
  });
  if (!agreed) return 1;  // another rank reports why
  return dist.run([&] { return trainer->run(resumed); });
}

}  // namespace train
