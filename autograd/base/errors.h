// The two kinds of user-facing error.
//
// Note [Two kinds of error]: a UsageError is a wrong flag or combination of
// flags (exit 2); a DataError is a file or input that cannot be used:
// missing, damaged, of the wrong kind, or a disk that fails (exit 1). Either
// message is one line that names the thing and says how to fix it, thrown
// before anything the user has is touched. A broken internal invariant is
// neither: it is a bug, reported by TG_CHECK (check.h), which aborts. The
// command-line front end's main() prints the two as
// "tapegpt CMD: error: MESSAGE" and exits with their status.
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
