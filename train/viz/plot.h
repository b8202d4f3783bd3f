// `tapegpt plot`: a run's metrics.jsonl as training/validation loss and
// learning-rate curves, against step, tokens seen, training seconds or wall
// minutes, in one SVG.
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
  std::vector<double> elapsed_s;             // wall seconds of the training rows (NaN where not logged)
  std::vector<double> val_elapsed_s;         // and of the evaluations
  double tokens_per_step = 0;                // 0: unknown (no tokens axis for this run)
};

// Reads `path` (a metrics.jsonl). A record written again after a resume
// replaces the earlier one for its step; records without a step and a loss
// (--budget's plan and revisions) are passed over. Throws tg::DataError
// naming the file and line when it is missing or malformed.
RunCurves read_metrics(const std::string& path, const std::string& name);

// The horizontal axis of one panel of the plot.
enum class PlotAxis {
  Step,          // optimizer steps
  Tokens,        // tokens seen (step × tokens_per_step; runs with 0 are left out)
  TrainSeconds,  // train_s: wall time in training steps, evaluation and saving excluded
  WallMinutes,   // elapsed_s / 60: wall time of the command, everything included
};

// The axes `tapegpt plot` draws when not told: step, tokens, training seconds.
std::vector<PlotAxis> default_plot_axes();

// The SVG: one panel per axis, side by side (runs whose log lacks that
// axis's field are left out of that panel); loss on the left axis, the
// learning rate dashed on the right axis; one colour per run.
std::string loss_plot_svg(const std::vector<RunCurves>& runs,
                          const std::vector<PlotAxis>& axes = default_plot_axes());

// About `n` round tick values from at or below lo to at or above hi (steps
// of 1, 2 or 5 × 10^k).
std::vector<double> nice_ticks(double lo, double hi, int n = 5);

}  // namespace viz
