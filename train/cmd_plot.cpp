// `tapegpt plot`: training and validation loss of one or more runs, against
// step and against tokens seen, with the learning rate, as one SVG.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoints/checkpoint.h"
#include "autograd/base/atomic_file.h"
#include "train/cli_util.h"
#include "train/commands.h"
#include "train/output_files.h"
#include "train/plot.h"

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

}  // namespace

int cmd_plot(int argc, char** argv) {
  cxxopts::Options opts("tapegpt plot",
                        "Plot the training and validation loss of runs (their metrics.jsonl) against\n"
                        "step and against tokens seen, with the learning rate on a second axis. Several\n"
                        "run directories go on one plot.\n"
                        "  tapegpt plot RUNDIR [RUNDIR2 ...] [--out FILE.svg]");
  opts.add_options()
      ("out", "SVG to write (default: RUNDIR/loss.svg for a single run)", cxxopts::value<std::string>())
      ("overwrite", "replace an existing --out file")
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
  for (const std::string& d : dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(d, ec))
      throw tg::UsageError(d + " is not a directory; give run directories written by 'tapegpt train'");
  }
  refuse_existing({out}, r.count("overwrite") > 0);

  std::vector<viz::RunCurves> runs;
  for (const std::string& d : dirs) {
    runs.push_back(viz::read_metrics(d + "/metrics.jsonl", d));
    runs.back().tokens_per_step = tokens_per_step(d);
  }
  tg::atomic_write_file(out, viz::loss_plot_svg(runs));
  std::printf("wrote %s\n", out.c_str());
  return 0;
}

}  // namespace cli
