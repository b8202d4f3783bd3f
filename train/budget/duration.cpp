// Durations on the command line (see duration.h).
#include "train/budget/duration.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "autograd/base/errors.h"

namespace train {

double parse_duration_seconds(const std::string& text, const std::string& flag) {
  const auto bad = [&](const std::string& why) {
    return tg::UsageError("--" + flag + " '" + text + "': " + why +
                          "; write a duration such as 90s, 5m, 2h or 1h30m");
  };
  if (text.empty()) throw bad("empty");
  double total = 0;
  size_t i = 0;
  while (i < text.size()) {
    const char* start = text.c_str() + i;
    if (!std::isdigit(static_cast<unsigned char>(*start)) && *start != '.') throw bad("expected a number");
    char* end = nullptr;
    const double value = std::strtod(start, &end);
    i += static_cast<size_t>(end - start);
    if (end == start || !std::isfinite(value)) throw bad("expected a number");
    if (i == text.size()) throw bad("the number " + text.substr(i - static_cast<size_t>(end - start)) + " has no unit (s, m or h)");
    const char unit = text[i++];
    if (unit == 's') total += value;
    else if (unit == 'm') total += 60 * value;
    else if (unit == 'h') total += 3600 * value;
    else throw bad(std::string("unknown unit '") + unit + "'");
  }
  if (!(total > 0)) throw bad("not a positive duration");
  return total;
}

}  // namespace train
