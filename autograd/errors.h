// The two kinds of user-facing error (Note [Two kinds of error]): a UsageError
// is a wrong flag or combination of flags (exit 2); a DataError is a file or
// input that cannot be used (exit 1). Messages are one line that names the
// thing and says how to fix it. Broken internal invariants use TG_CHECK.
#pragma once

#include <stdexcept>
#include <string>

namespace tg {

struct UsageError : std::runtime_error {
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

struct DataError : std::runtime_error {
  explicit DataError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace tg
