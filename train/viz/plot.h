// `tapegpt plot`: a run's metrics.jsonl as training/validation loss and
// learning-rate curves, against step, tokens seen and training wall time,
// in one SVG.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace viz {

struct RunCurves {
  std::string name;                          // shown in the legend
  std::vector<double> step, loss, lr;        // training steps (last record per step wins)
  std::vector<double> train_s;               // their training seconds (NaN where not logged)
  std::vector<double> val_step, val_loss;    // evaluations
  std::vector<double> val_train_s;           // their training seconds (NaN where not logged)
  double tokens_per_step = 0;                // 0: unknown (no tokens axis for this run)
};

// Reads `path` (a metrics.jsonl). A record written again after a resume
// replaces the earlier one for its step. Throws tg::DataError naming the
// file and line when it is missing or malformed.
RunCurves read_metrics(const std::string& path, const std::string& name);

// The SVG: three panels, against step, against tokens seen (runs with
// tokens_per_step 0 are left out there) and against training seconds
// (train_s: wall time in training steps, evaluation and saving excluded;
// logs without it are left out there); loss on the left axis, the learning
// rate dashed on the right axis; one colour per run.
std::string loss_plot_svg(const std::vector<RunCurves>& runs);

// About `n` round tick values from at or below lo to at or above hi (steps
// of 1, 2 or 5 × 10^k).
std::vector<double> nice_ticks(double lo, double hi, int n = 5);

}  // namespace viz
