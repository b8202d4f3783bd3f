// A wall-clock duration as a user writes it on the command line.
#pragma once

#include <string>

namespace train {

// Seconds in `text`: one or more NUMBER UNIT pairs, the unit s, m or h
// ("90s", "5m", "2h", "1h30m", "1.5h"). Throws tg::UsageError naming `flag`
// for anything else, and for a duration that is not positive.
double parse_duration_seconds(const std::string& text, const std::string& flag);

}  // namespace train
