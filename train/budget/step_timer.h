// How long one training step of a candidate plan takes on this machine:
// what --budget measures before it chooses (Note [Budget plan] in plan.h).
#pragma once

#include "train/options.h"

namespace train {

// Seconds one optimizer step of `o` (model, batch, optimizer, precision:
// "auto" is resolved as the run would) takes here, on the current thread
// count: the median of `timed_steps` steps on synthetic tokens after one
// untimed step (which pays the first calls' one-time costs). Builds and
// frees its own model; the run's model is not touched.
double measure_step_seconds(const TrainOptions& o, int timed_steps = 3);

}  // namespace train
