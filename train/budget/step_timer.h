// How long one training step of a candidate plan takes on this machine:
// what --budget measures before it chooses (Note [Budget plan] in plan.h).
#pragma once

#include "train/options.h"

namespace train {

class Distributed;

// Seconds one optimizer step of `o` (model, batch, optimizer, precision:
// "auto" is resolved as the run would) takes here, on the current thread
// count: the median of `timed_steps` steps on synthetic tokens after one
// untimed step (which pays the first calls' one-time costs). Builds and
// frees its own model; the run's model is not touched. With `dist` of
// several ranks every rank calls it and they step together, as the run
// will: each its share of the micro-batches, the gradient sum included
// (the time is this rank's; the caller agrees on one).
double measure_step_seconds(const TrainOptions& o, Distributed* dist = nullptr, int timed_steps = 3);

}  // namespace train
