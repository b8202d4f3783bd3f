// Note [Budget guard]
// A --budget plan is made from a few measured steps; the machine may then
// run slower (another job starts) or faster (one ends). After each step the
// loop asks the guard whether the run still ends on time, from the wall
// time per step so far (evaluations and saves included):
// - While the learning rate is still held (WSD before its decay; the first
//   quarter of a cosine schedule) and the projected end misses the planned
//   deadline by more than kReviseShare of the run, the step count is revised
//   to end at the deadline: with WSD the run is then the same as if it had
//   been planned with that count from the start.
// - In the decay, a projection past the hard deadline (the whole budget, the
//   final evaluation and save kept aside) cuts the run to end 1% of its
//   steps before it (the decay's line then ends earlier: an emergency).
// The loop records each revision (metrics.jsonl, the checkpoint's flags),
// so a resume continues the plan as recorded; a resumed run has no guard:
// its clock started with another process.
#pragma once

#include <cstdint>
#include <string>

#include "train/lr_schedule.h"

namespace train {

constexpr double kReviseShare = 0.03;

class BudgetGuard {
 public:
  // Seconds since the command started: `deadline_s` for the planned end of
  // the last step, `hard_deadline_s` for the latest it may end.
  BudgetGuard(double deadline_s, double hard_deadline_s) : deadline_(deadline_s), hard_(hard_deadline_s) {}

  // After `step` steps at `now_s`, for a run planned to end at `max_steps`
  // with `schedule`: the step count it should end at (max_steps when it is
  // on time), and in `why` a sentence saying what changed.
  int64_t revise(int64_t step, int64_t max_steps, const LrSchedule& schedule, double now_s, std::string* why);

 private:
  double deadline_, hard_;
  int64_t first_step_ = -1;  // the step and time the guard first saw: its wall time per step starts there
  double first_s_ = 0;
};

}  // namespace train
