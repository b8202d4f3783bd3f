// metrics.jsonl writer and progress line (see metrics.h).
#include "train/metrics.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "autograd/base/errors.h"
#include "autograd/base/atomic_file.h"

namespace train {

MetricsLog::MetricsLog(const std::string& path, bool fresh) : path_(path) {
  if (fresh) {
    pending_ = std::make_unique<tg::TempFile>(path);
    file_ = std::fopen(pending_->path().c_str(), "w");
    if (!file_)
      throw tg::DataError("cannot open " + pending_->path() + " for writing: " + std::strerror(errno) +
                          "; check that the run directory is writable");
    return;
  }
  // A run killed mid-line (or a full disk) can leave a torn last line: start
  // on a fresh line so every complete object stays parseable.
  bool torn = false;
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    if (std::fseek(f, -1, SEEK_END) == 0) torn = std::fgetc(f) != '\n';
    std::fclose(f);
  }
  file_ = std::fopen(path.c_str(), "a");
  if (!file_)
    throw tg::DataError("cannot open " + path + " for appending: " + std::strerror(errno) +
                        "; check that the run directory is writable");
  if (torn) std::fputc('\n', file_);
}

void MetricsLog::begin_line() {
  line_start_ = std::ftell(file_);
}

void MetricsLog::finish_line() {
  std::fputs("}\n", file_);
  if (std::fflush(file_) != 0 || std::ferror(file_)) {
    const int err = errno;
    // Cut the partial line off again, so the file holds only whole objects.
    if (line_start_ >= 0 && ::ftruncate(fileno(file_), line_start_) != 0) { /* nothing more to do */ }
    errno = err;
    throw tg::DataError("cannot write " + path_ + ": " + std::strerror(errno) +
                        "; free disk space, then resume from the last checkpoint");
  }
  if (pending_) {
    // The first row is written: the fresh log replaces the old one (fsync,
    // rename, fsync the directory); this FILE keeps writing to it.
    pending_->commit();
    pending_.reset();
  }
}

MetricsLog::~MetricsLog() {
  if (file_) std::fclose(file_);
  // A fresh log that never got a row: pending_'s destructor deletes it.
}

namespace {
// JSON has no NaN or Infinity: write null for them.
void put_number(std::FILE* f, const char* key, double v) {
  if (std::isfinite(v)) std::fprintf(f, ",\"%s\":%.9g", key, v);
  else std::fprintf(f, ",\"%s\":null", key);
}

// A JSON string: quotes, backslashes and control characters escaped.
void put_string(std::FILE* f, const std::string& text) {
  std::fputc('"', f);
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') std::fprintf(f, "\\%c", c);
    else if (c < 0x20) std::fprintf(f, "\\u%04x", c);
    else std::fputc(c, f);
  }
  std::fputc('"', f);
}
}  // namespace

void MetricsLog::log_plan(double budget_s, const std::string& plan_lines) {
  begin_line();
  std::fputs("{", file_);
  std::fprintf(file_, "\"budget_s\":%.9g,\"plan\":[", budget_s);
  size_t start = 0;
  bool first = true;
  while (start < plan_lines.size()) {
    size_t end = plan_lines.find('\n', start);
    if (end == std::string::npos) end = plan_lines.size();
    if (!first) std::fputc(',', file_);
    put_string(file_, plan_lines.substr(start, end - start));
    first = false;
    start = end + 1;
  }
  std::fputs("]", file_);
  finish_line();
}

void MetricsLog::log_revision(int64_t step, int64_t max_steps, const std::string& why) {
  begin_line();
  std::fprintf(file_, "{\"revised_at_step\":%lld,\"max_steps\":%lld,\"budget\":", static_cast<long long>(step),
               static_cast<long long>(max_steps));
  put_string(file_, why);
  finish_line();
}

void MetricsLog::log_step(int64_t step, double loss, double lr, double grad_norm,
                          double tokens_per_s, double elapsed_s, double train_s, int world_size,
                          double allreduce_s) {
  begin_line();
  std::fprintf(file_, "{\"step\":%lld", static_cast<long long>(step));
  put_number(file_, "loss", loss);
  put_number(file_, "lr", lr);
  put_number(file_, "grad_norm", grad_norm);
  put_number(file_, "tokens_per_s", tokens_per_s);
  put_number(file_, "elapsed_s", elapsed_s);
  put_number(file_, "train_s", train_s);
  std::fprintf(file_, ",\"world_size\":%d", world_size);
  put_number(file_, "allreduce_s", allreduce_s);
  finish_line();
}

void MetricsLog::log_eval(int64_t step, double val_loss, double elapsed_s, double train_s, bool whole_split) {
  begin_line();
  std::fprintf(file_, "{\"step\":%lld", static_cast<long long>(step));
  put_number(file_, "val_loss", val_loss);
  std::fprintf(file_, ",\"val_whole\":%s", whole_split ? "true" : "false");
  put_number(file_, "elapsed_s", elapsed_s);
  put_number(file_, "train_s", train_s);
  finish_line();
}

ProgressLine::ProgressLine() : enabled_(isatty(STDERR_FILENO) == 1) {}

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  char buf[32];
  const long long t = static_cast<long long>(s + 0.5);
  if (t < 60) std::snprintf(buf, sizeof buf, "%llds", t);
  else if (t < 3600) std::snprintf(buf, sizeof buf, "%lldm%02llds", t / 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%lldh%02lldm", t / 3600, (t % 3600) / 60);
  return buf;
}

void ProgressLine::update(int64_t step, int64_t total, double loss, double tokens_per_s,
                          double cpu_share, double eta_s, int world_size, double allreduce_share) {
  if (!enabled_) return;
  char ranks[64] = "";
  if (world_size > 1)
    std::snprintf(ranks, sizeof ranks, " | %d processes, all-reduce %.0f%%", world_size,
                  100.0 * allreduce_share);
  std::fprintf(stderr, "\r\033[Kstep %lld/%lld | loss %.4f | %.0f tok/s%s | CPU %.0f%% of peak | ETA %s",
               static_cast<long long>(step), static_cast<long long>(total), loss, tokens_per_s, ranks,
               100.0 * cpu_share, format_duration(eta_s).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::clear() {
  if (enabled_ && drawn_) {
    std::fputs("\r\033[K", stderr);
    drawn_ = false;
  }
}

double latest_elapsed_seconds(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return 0.0;
  static const char kKey[] = "\"elapsed_s\":";
  double latest = 0.0;
  std::string line;
  for (int c; (c = std::fgetc(f)) != EOF;) {
    if (c != '\n') {
      line += static_cast<char>(c);
      continue;
    }
    const size_t at = line.find(kKey);
    if (at != std::string::npos) latest = std::max(latest, std::strtod(line.c_str() + at + sizeof kKey - 1, nullptr));
    line.clear();
  }
  std::fclose(f);
  return std::isfinite(latest) ? latest : 0.0;
}

}  // namespace train
