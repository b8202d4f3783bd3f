// ProgressMeter: one "\r" line on stderr for long prepare passes: bytes
// done, MB/s and the time left, redrawn at most a few times a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace data {

class ProgressMeter {
 public:
  // Draws nothing unless enabled (prepare enables it only on a terminal).
  ProgressMeter(bool enabled, std::string label, int64_t total_bytes);
  void update(int64_t done_bytes);
  void finish();  // the final line, then a newline

 private:
  void draw(int64_t done, bool final);
  bool enabled_;
  std::string label_;
  int64_t total_;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace data
