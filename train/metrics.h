// Run output: metrics.jsonl (one JSON object per step and per evaluation,
// appended across resumes of one run, started afresh by a new run) and the
// live progress line on a terminal.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace tg {
class TempFile;
}

namespace train {

class MetricsLog {
 public:
  // Opens `path` for appending; throws tg::DataError if it cannot. With
  // `fresh` (a new run, or --overwrite) the rows go to a temporary file that
  // replaces `path` atomically once the first row is written, so an old log
  // is never appended to and is kept until the new run has produced a row.
  MetricsLog(const std::string& path, bool fresh);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  // elapsed_s: the run's clock: wall seconds since this process began,
  // and for a --budget run the budget spent before it resumed (so a budget
  // run's rows continue across resumes);
  // train_s: wall seconds spent in training steps since the run began,
  // across resumes, without evaluations and checkpoint saves (the x axis
  // of a time-to-loss curve); world_size: processes training together (1
  // without mpirun); allreduce_s: this step's wait for the gradient
  // all-reduce. whole_split: the validation loss is the whole split's, not
  // an estimate from windows spread over it (Note [Spread evaluation]).
  void log_step(int64_t step, double loss, double lr, double grad_norm, double tokens_per_s,
                double elapsed_s, double train_s, int world_size = 1, double allreduce_s = 0.0);
  void log_eval(int64_t step, double val_loss, double elapsed_s, double train_s, bool whole_split);
  // --budget's rows (Note [Budget plan]): the plan before the first step,
  // {"budget_s":300,"plan":["model: ...", ...]}, and each revision of the
  // step count, {"revised_at_step":120,"max_steps":1400,"budget":"why"}.
  void log_plan(double budget_s, const std::string& plan_lines);
  void log_revision(int64_t step, int64_t max_steps, const std::string& why);

 private:
  void begin_line();   // remembers where the object starts
  void finish_line();  // ends it; on a failed write cuts it off and throws tg::DataError
  long line_start_ = -1;
  std::string path_;
  std::unique_ptr<tg::TempFile> pending_;  // fresh log not yet in place
  std::FILE* file_ = nullptr;
};

// "step 120/2000 | loss 2.1234 | 3,210 tok/s | CPU 45% | ETA 4m12s", redrawn
// in place on stderr when it is a terminal; nothing otherwise.
class ProgressLine {
 public:
  ProgressLine();
  bool enabled() const { return enabled_; }
  // With several processes the line also shows N and the share of the step
  // spent waiting for the all-reduce; tokens_per_s is the global rate.
  void update(int64_t step, int64_t total, double loss, double tokens_per_s, double cpu_share,
              double eta_s, int world_size = 1, double allreduce_share = 0.0);
  void clear();  // erase the line before ordinary output

 private:
  bool enabled_ = false;
  bool drawn_ = false;
};

std::string format_duration(double seconds);

// The largest elapsed_s of the rows in the metrics.jsonl at `path` (0 when
// it has none or cannot be read): how far a --budget run's clock got, the
// steps after its last checkpoint included.
double latest_elapsed_seconds(const std::string& path);  // "4m12s", "1h03m"

}  // namespace train
