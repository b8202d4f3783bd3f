// The learning-rate schedule: linear warmup, then either a cosine decay to
// min_lr at decay_steps (nanoGPT's, the default) or warmup-stable-decay
// (WSD: lr held constant, then a straight line down to min_lr over the last
// decay_frac of decay_steps); min_lr from decay_steps on (constant when
// min_lr == lr).
#pragma once

#include <cstdint>
#include <string>

namespace train {

enum class LrShape { Cosine, Wsd };

struct LrSchedule {
  double lr = 1e-3;
  double min_lr = 1e-4;
  int64_t warmup = 0;
  int64_t decay_steps = 0;  // the step at which min_lr is reached
  LrShape shape = LrShape::Cosine;
  double decay_frac = 0.2;  // WSD only: the share of decay_steps spent decaying, in (0, 1]
};

// Learning rate for step s (0-based). Cosine is nanoGPT's get_lr(it = s):
//   s < warmup:            lr·(s+1)/(warmup+1)
//   warmup ≤ s < decay:    min_lr + ½(1 + cos(π·(s-warmup)/(decay-warmup)))·(lr - min_lr)
//   s ≥ decay:             min_lr
// WSD, with start = max(warmup, decay - round(decay_frac·decay)):
//   s < warmup:            lr·(s+1)/(warmup+1)
//   warmup ≤ s < start:    lr
//   start ≤ s < decay:     min_lr + (lr - min_lr)·(decay - s)/(decay - start)
//   s ≥ decay:             min_lr
double lr_at(const LrSchedule& schedule, int64_t step);

// The first step of WSD's decay (decay_steps when there is none).
int64_t wsd_decay_start(const LrSchedule& schedule);

const char* lr_shape_name(LrShape shape);
// Parses "cosine" / "wsd"; false on anything else.
bool lr_shape_parse(const std::string& name, LrShape* out);

}  // namespace train
