// The prepare progress line (see progress_meter.h).
#include "data/progress_meter.h"

#include <cstdio>

namespace data {

ProgressMeter::ProgressMeter(bool enabled, std::string label, int64_t total_bytes)
    : enabled_(enabled), label_(std::move(label)), total_(total_bytes),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

void ProgressMeter::update(int64_t done) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(250)) return;
  last_ = now;
  draw(done, false);
}

void ProgressMeter::finish() {
  if (enabled_) draw(total_, true);
}

void ProgressMeter::draw(int64_t done, bool final) {
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double mb = static_cast<double>(done) / 1e6;
  const double rate = secs > 0 ? mb / secs : 0.0;
  std::fprintf(stderr, "\r%s %.1f / %.1f MB, %.1f MB/s", label_.c_str(), mb, static_cast<double>(total_) / 1e6, rate);
  if (final) {
    std::fprintf(stderr, ", %.1f s          \n", secs);
  } else if (rate > 0) {
    std::fprintf(stderr, ", ETA %.0f s   ", (static_cast<double>(total_ - done) / 1e6) / rate);
  }
  std::fflush(stderr);
}

}  // namespace data
