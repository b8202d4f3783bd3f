// The budget's guard in the loop (see guard.h, Note [Budget guard]).
#include "train/budget/guard.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace train {

namespace {

// Whether the learning rate has not started to fall yet, so the run's end
// can move without a jump in it.
bool still_held(const LrSchedule& s, int64_t step, int64_t max_steps) {
  if (s.shape == LrShape::Wsd) return step + 1 < wsd_decay_start(s);
  return step < std::max(s.warmup, max_steps / 4);
}

// The smallest count whose WSD decay starts after `step`: a revision never
// moves the decay's start into the past.
int64_t min_end_after(const LrSchedule& s, int64_t step) {
  if (s.shape != LrShape::Wsd) return step + 1;
  int64_t end = step + 1;
  while (end - static_cast<int64_t>(std::lround(s.decay_frac * static_cast<double>(end))) <= step) ++end;
  return end;
}

}  // namespace

int64_t BudgetGuard::revise(int64_t step, int64_t max_steps, const LrSchedule& schedule, double now_s,
                            std::string* why) {
  if (first_step_ < 0) {
    first_step_ = step;
    first_s_ = now_s;
    return max_steps;
  }
  const int64_t done = step - first_step_;
  // A few seconds and steps before the rate means anything.
  if (done < 5 || now_s - first_s_ < 2.0) return max_steps;
  const double per_step = (now_s - first_s_) / static_cast<double>(done);
  char buf[200];
  if (still_held(schedule, step, max_steps)) {
    // Aim at the planned deadline; a small miss is left alone.
    const int64_t target = step + static_cast<int64_t>((deadline_ - now_s) / per_step);
    if (std::abs(static_cast<double>(target - max_steps)) <= kReviseShare * static_cast<double>(max_steps))
      return max_steps;
    const int64_t end = std::max(target, min_end_after(schedule, step));
    if (end == max_steps) return max_steps;
    std::snprintf(buf, sizeof buf, "the machine runs at %.0f ms a step (%s than measured): %lld steps instead of %lld",
                  1e3 * per_step, end < max_steps ? "slower" : "faster", static_cast<long long>(end),
                  static_cast<long long>(max_steps));
    *why = buf;
    return end;
  }
  // In the decay: only a run that would pass the hard deadline is cut, by
  // 1% of its steps more than needed, so that one cut holds a while.
  if (now_s + static_cast<double>(max_steps - step) * per_step <= hard_) return max_steps;
  const int64_t fits = static_cast<int64_t>((hard_ - now_s) / per_step);
  const int64_t end = step + std::max<int64_t>(0, fits - (max_steps + 99) / 100);
  if (end >= max_steps) return max_steps;
  std::snprintf(buf, sizeof buf, "the machine runs at %.0f ms a step: cut to %lld steps to end within the budget",
                1e3 * per_step, static_cast<long long>(end));
  *why = buf;
  return end;
}

}  // namespace train
