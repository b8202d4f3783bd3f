// TrainOptions checks (see options.h).
#include "train/options.h"

#include <cmath>

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
  if (!(s.decay_frac > 0 && s.decay_frac <= 1)) return "--lr-decay-frac must be above 0 and at most 1";
  const AdamWConfig& a = o.adamw;
  if (!(a.beta1 >= 0 && a.beta1 < 1)) return "--beta1 must be in [0, 1)";
  if (!(a.beta2 >= 0 && a.beta2 < 1)) return "--beta2 must be in [0, 1)";
  if (!(a.weight_decay >= 0)) return "--weight-decay must be 0 or more";
  if (!(a.grad_clip >= 0)) return "--grad-clip must be 0 (off) or more";
  if (!(o.muon.momentum >= 0 && o.muon.momentum < 1)) return "--muon-momentum must be in [0, 1)";
  if (!(o.muon.adamw_lr > 0 && std::isfinite(o.muon.adamw_lr))) return "--adamw-lr must be a positive number";
  if (o.optimizer == OptimizerKind::Muon && o.shard_optimizer)
    return "--shard-optimizer cannot run --optimizer muon: Muon orthogonalises whole matrices and a "
           "process's slice of the parameters cuts them; drop --shard-optimizer";
  if (o.sampler != "random" && o.sampler != "sequential")
    return "--sampler must be 'random' or 'sequential' (got '" + o.sampler + "')";
  if (o.eval_interval < 0 || o.eval_steps < 0)
    return "--eval-interval must be 0 (off) or more and --eval-steps 0 (the whole split) or more";
  if (o.ckpt_interval < 0) return "--ckpt-interval must be 0 (only at the end) or more";
  if (o.keep < 0 || o.keep > 1000000) return "--keep must be between 0 (only ckpt.h5) and 1000000";
  if (o.threads < 0 || o.threads > 4096) return "--threads must be between 0 (all cores) and 4096";
  return "";
}

}  // namespace train
