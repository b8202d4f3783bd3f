// Learning-rate schedule (see lr_schedule.h).
#include "train/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace train {

int64_t wsd_decay_start(const LrSchedule& s) {
  const int64_t cooldown = std::llround(s.decay_frac * static_cast<double>(s.decay_steps));
  return std::max(s.warmup, s.decay_steps - cooldown);
}

double lr_at(const LrSchedule& s, int64_t step) {
  if (step < s.warmup) return s.lr * static_cast<double>(step + 1) / static_cast<double>(s.warmup + 1);
  if (s.min_lr == s.lr) return s.lr;
  if (step >= s.decay_steps) return s.min_lr;
  if (s.shape == LrShape::Wsd) {
    const int64_t start = wsd_decay_start(s);
    if (step < start) return s.lr;
    return s.min_lr + (s.lr - s.min_lr) * static_cast<double>(s.decay_steps - step) /
                          static_cast<double>(s.decay_steps - start);
  }
  const double progress = static_cast<double>(step - s.warmup) /
                          static_cast<double>(s.decay_steps - s.warmup);
  const double coeff = 0.5 * (1.0 + std::cos(M_PI * progress));
  return s.min_lr + coeff * (s.lr - s.min_lr);
}

const char* lr_shape_name(LrShape shape) { return shape == LrShape::Wsd ? "wsd" : "cosine"; }

bool lr_shape_parse(const std::string& name, LrShape* out) {
  if (name == "cosine") *out = LrShape::Cosine;
  else if (name == "wsd") *out = LrShape::Wsd;
  else return false;
  return true;
}

}  // namespace train
