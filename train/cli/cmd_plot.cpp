// `tapegpt plot`: training and validation loss of one or more runs, against
// step, tokens seen, training seconds or wall minutes, with the learning
// rate, as one SVG.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoints/checkpoint.h"
#include "autograd/base/atomic_file.h"
#include "train/cli/cli_util.h"
#include "train/cli/commands.h"
#include "train/cli/output_files.h"
#include "train/viz/plot.h"

namespace cli {

namespace {

// Tokens per optimizer step from the run's latest checkpoint (tokens_seen /
// step: batch × block × accumulation, whatever flags made it); 0 if unknown.
double tokens_per_step(const std::string& run_dir) {
  const std::string path = run_dir + "/ckpt.h5";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return 0;
  try {
    const checkpoints::Loaded ck = checkpoints::load_checkpoint(path, false);
    const checkpoints::TrainState& t = ck.meta.train;
    return t.step > 0 ? static_cast<double>(t.tokens_seen) / static_cast<double>(t.step) : 0;
  } catch (const tg::DataError& e) {
    std::fprintf(stderr, "tapegpt plot: note: no tokens axis for %s (%s)\n", run_dir.c_str(), e.what());
    return 0;
  }
}

// --x-axis step,tokens,seconds,minutes: the panels, in the order given.
std::vector<viz::PlotAxis> parse_axes(const std::string& list) {
  std::vector<viz::PlotAxis> axes;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, comma - start);
    viz::PlotAxis axis;
    if (name == "step") axis = viz::PlotAxis::Step;
    else if (name == "tokens") axis = viz::PlotAxis::Tokens;
    else if (name == "seconds") axis = viz::PlotAxis::TrainSeconds;
    else if (name == "minutes") axis = viz::PlotAxis::WallMinutes;
    else
      throw tg::UsageError("--x-axis takes step, tokens, seconds or minutes, comma-separated (got '" + name + "')");
    if (std::find(axes.begin(), axes.end(), axis) != axes.end())
      throw tg::UsageError("--x-axis names '" + name + "' twice");
    axes.push_back(axis);
    start = comma + 1;
  }
  return axes;
}

}  // namespace

int cmd_plot(int argc, char** argv) {
  cxxopts::Options opts("tapegpt plot",
                        "Plot the training and validation loss of runs (their metrics.jsonl) against\n"
                        "step, tokens seen, training seconds or wall minutes (--x-axis), with the learning\n"
                        "rate on a second axis. Several run directories go on one plot.\n"
                        "  tapegpt plot RUNDIR [RUNDIR2 ...] [-x|--x-axis step,tokens,seconds,minutes] [--out FILE.svg]");
  opts.add_options()
      ("out", "SVG to write (default: RUNDIR/loss.svg for a single run)", cxxopts::value<std::string>())
      ("overwrite", "replace an existing --out file")
      ("x,x-axis", "the horizontal axes, one panel each, comma-separated: step, tokens (tokens seen, from ckpt.h5), "
            "seconds (train_s: training steps only) or minutes (elapsed_s / 60: the command's wall time, "
            "evaluations and saves included; it restarts at a resume)",
       cxxopts::value<std::string>()->default_value("step,tokens,seconds"))
      ("runs", "run directories", cxxopts::value<std::vector<std::string>>());
  add_common_options(opts);
  opts.parse_positional({"runs"});
  opts.positional_help("RUNDIR [RUNDIR2 ...]");
  cxxopts::ParseResult r;
  if (!parse_or_help(opts, argc, argv, &r)) return 0;
  if (!r.count("runs")) throw tg::UsageError("give at least one run directory: tapegpt plot RUNDIR");
  std::vector<std::string> dirs = get<std::vector<std::string>>(r, "runs");
  for (std::string& d : dirs)
    while (d.size() > 1 && d.back() == '/') d.pop_back();
  std::string out;
  if (r.count("out")) out = get<std::string>(r, "out");
  else if (dirs.size() == 1) out = dirs[0] + "/loss.svg";
  else throw tg::UsageError("with several runs, say where the plot goes: --out FILE.svg");
  if (out.empty()) throw tg::UsageError("--out must name a file");
  const std::vector<viz::PlotAxis> axes = parse_axes(get<std::string>(r, "x-axis"));
  for (const std::string& d : dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(d, ec))
      throw tg::UsageError(d + " is not a directory; give run directories written by 'tapegpt train'");
  }
  refuse_existing({out}, r.count("overwrite") > 0);

  std::vector<viz::RunCurves> runs;
  for (const std::string& d : dirs) {
    runs.push_back(viz::read_metrics(d + "/metrics.jsonl", d));
    if (std::find(axes.begin(), axes.end(), viz::PlotAxis::Tokens) != axes.end())
      runs.back().tokens_per_step = tokens_per_step(d);
  }
  tg::atomic_write_file(out, viz::loss_plot_svg(runs, axes));
  std::printf("wrote %s\n", out.c_str());
  return 0;
}

}  // namespace cli
