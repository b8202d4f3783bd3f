// Learning-rate schedule (see lr_schedule.h).
#include "train/lr_schedule.h"

#include <cmath>

namespace train {

double lr_at(const LrSchedule& s, int64_t step) {
  if (step < s.warmup) return s.lr * static_cast<double>(step + 1) / static_cast<double>(s.warmup + 1);
  if (s.min_lr == s.lr) return s.lr;
  if (step >= s.decay_steps) return s.min_lr;
  const double progress = static_cast<double>(step - s.warmup) /
                          static_cast<double>(s.decay_steps - s.warmup);
  const double coeff = 0.5 * (1.0 + std::cos(M_PI * progress));
  return s.min_lr + coeff * (s.lr - s.min_lr);
}

}  // namespace train
