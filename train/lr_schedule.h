// The learning-rate schedule: linear warmup, then cosine decay to min_lr at
// decay_steps, then min_lr (constant when min_lr == lr).
#pragma once

#include <cstdint>

namespace train {

struct LrSchedule {
  double lr = 1e-3;
  double min_lr = 1e-4;
  int64_t warmup = 0;
  int64_t decay_steps = 0;  // the step at which min_lr is reached
};

// Learning rate for step s (0-based), nanoGPT's get_lr(it = s):
//   s < warmup:            lr·(s+1)/(warmup+1)
//   warmup ≤ s < decay:    min_lr + ½(1 + cos(π·(s-warmup)/(decay-warmup)))·(lr - min_lr)
//   s ≥ decay:             min_lr
double lr_at(const LrSchedule& schedule, int64_t step);

}  // namespace train
