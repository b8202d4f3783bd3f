// TrainOptions checks and their checkpoint representation (see options.h).
#include "train/options.h"

#include <cmath>
#include <variant>

#include "autograd/base/errors.h"

namespace train {

std::string options_error(const TrainOptions& o) {
  const std::string model = nn::config_error(o.model);
  if (!model.empty()) return model;
  if (o.batch_size < 1 || o.batch_size > 65536) return "--batch-size must be between 1 and 65536";
  if (o.grad_accum < 1 || o.grad_accum > 65536) return "--grad-accum must be between 1 and 65536";
  if (o.max_steps < 0) return "--max-steps must be 0 or more";
  const LrSchedule& s = o.schedule;
  if (!(s.lr > 0 && std::isfinite(s.lr))) return "--lr must be a positive number";
  if (!(s.min_lr >= 0 && s.min_lr <= s.lr)) return "--min-lr must be between 0 and --lr";
  if (s.warmup < 0) return "--warmup must be 0 or more";
  if (s.decay_steps < s.warmup)
    return "--lr-decay-steps (" + std::to_string(s.decay_steps) + ") must not be below --warmup (" +
           std::to_string(s.warmup) + ")";
  const AdamWConfig& a = o.adamw;
  if (!(a.beta1 >= 0 && a.beta1 < 1)) return "--beta1 must be in [0, 1)";
  if (!(a.beta2 >= 0 && a.beta2 < 1)) return "--beta2 must be in [0, 1)";
  if (!(a.weight_decay >= 0)) return "--weight-decay must be 0 or more";
  if (!(a.grad_clip >= 0)) return "--grad-clip must be 0 (off) or more";
  if (o.sampler != "random" && o.sampler != "sequential")
    return "--sampler must be 'random' or 'sequential' (got '" + o.sampler + "')";
  if (o.eval_interval < 0 || o.eval_steps < 1)
    return "--eval-interval must be 0 (off) or more and --eval-steps at least 1";
  if (o.ckpt_interval < 0) return "--ckpt-interval must be 0 (only at the end) or more";
  if (o.keep < 0 || o.keep > 1000000) return "--keep must be between 0 (only ckpt.h5) and 1000000";
  if (o.threads < 0 || o.threads > 4096) return "--threads must be between 0 (all cores) and 4096";
  return "";
}

std::vector<checkpoints::Flag> options_to_flags(const TrainOptions& o) {
  using checkpoints::Flag;
  const int64_t seed_bits = static_cast<int64_t>(o.seed);
  return {
      Flag{"data", o.data_dir},
      Flag{"batch_size", o.batch_size},
      Flag{"grad_accum", o.grad_accum},
      Flag{"max_steps", o.max_steps},
      Flag{"lr", o.schedule.lr},
      Flag{"min_lr", o.schedule.min_lr},
      Flag{"warmup", o.schedule.warmup},
      Flag{"lr_decay_steps", o.schedule.decay_steps},
      Flag{"weight_decay", static_cast<double>(o.adamw.weight_decay)},
      Flag{"beta1", static_cast<double>(o.adamw.beta1)},
      Flag{"beta2", static_cast<double>(o.adamw.beta2)},
      Flag{"eps", static_cast<double>(o.adamw.eps)},
      Flag{"grad_clip", static_cast<double>(o.adamw.grad_clip)},
      Flag{"seed", seed_bits},
      Flag{"sampler", o.sampler},
      Flag{"eval_interval", o.eval_interval},
      Flag{"eval_steps", o.eval_steps},
      Flag{"ckpt_interval", o.ckpt_interval},
      Flag{"keep", o.keep},
  };
}

namespace {

template <class T>
T flag_value(const checkpoints::Flag& f) {
  if (const T* v = std::get_if<T>(&f.value)) return *v;
  throw tg::DataError("checkpoint flag '" + f.name +
                      "' has the wrong type; the checkpoint is damaged or from another program");
}

}  // namespace

void options_from_flags(const std::vector<checkpoints::Flag>& flags, TrainOptions* o) {
  for (const checkpoints::Flag& f : flags) {
    const std::string& n = f.name;
    if (n == "data") o->data_dir = flag_value<std::string>(f);
    else if (n == "batch_size") o->batch_size = flag_value<int64_t>(f);
    else if (n == "grad_accum") o->grad_accum = flag_value<int64_t>(f);
    else if (n == "max_steps") o->max_steps = flag_value<int64_t>(f);
    else if (n == "lr") o->schedule.lr = flag_value<double>(f);
    else if (n == "min_lr") o->schedule.min_lr = flag_value<double>(f);
    else if (n == "warmup") o->schedule.warmup = flag_value<int64_t>(f);
    else if (n == "lr_decay_steps") o->schedule.decay_steps = flag_value<int64_t>(f);
    else if (n == "weight_decay") o->adamw.weight_decay = static_cast<float>(flag_value<double>(f));
    else if (n == "beta1") o->adamw.beta1 = static_cast<float>(flag_value<double>(f));
    else if (n == "beta2") o->adamw.beta2 = static_cast<float>(flag_value<double>(f));
    else if (n == "eps") o->adamw.eps = static_cast<float>(flag_value<double>(f));
    else if (n == "grad_clip") o->adamw.grad_clip = static_cast<float>(flag_value<double>(f));
    else if (n == "seed") o->seed = static_cast<uint64_t>(flag_value<int64_t>(f));
    else if (n == "sampler") o->sampler = flag_value<std::string>(f);
    else if (n == "eval_interval") o->eval_interval = flag_value<int64_t>(f);
    else if (n == "eval_steps") o->eval_steps = flag_value<int64_t>(f);
    else if (n == "ckpt_interval") o->ckpt_interval = flag_value<int64_t>(f);
    else if (n == "keep") o->keep = flag_value<int64_t>(f);
    // Unknown flags (from a newer tapegpt) are ignored.
  }
}

}  // namespace train
