// The command-line contract every tapegpt command follows, enforced here in
// one place: options parsed with cxxopts, every complaint one UsageError
// line that points at --help; no stray positional arguments; --threads on
// every command, validated and applied before any work.
#pragma once

#include <cxxopts.hpp>
#include <cstdio>
#include <string>

#include "autograd/base/errors.h"

namespace cli {

// Adds the options every command has: --threads N and -h/--help.
inline void add_common_options(cxxopts::Options& options) {
  options.add_options()
      ("threads", "worker threads (0 = all cores)", cxxopts::value<int>()->default_value("0"))
      ("h,help", "show this help");
}

// Seconds since this command began (its first call), for --budget's clock.
double command_seconds();

// Whether `name` is one of add_common_options' options.
inline bool is_common_option(const std::string& name) { return name == "threads" || name == "help"; }

// Sets OpenMP's (and OpenBLAS's, see kernels::set_blas_threads) thread count; 0 leaves
// the default (all cores).
void set_threads(int threads);

// 124439808 -> "124,439,808", for parameter counts people read.
std::string grouped(int64_t n);

// Empty when --threads N is usable, else the one-line complaint.
inline std::string threads_error(int threads) {
  if (threads < 0 || threads > 4096) return "--threads must be between 0 (all cores) and 4096";
  return "";
}

// Fetches an option's value, turning a malformed value into a UsageError.
template <class T>
T get(const cxxopts::ParseResult& r, const std::string& name) {
  try {
    return r[name].as<T>();
  } catch (const cxxopts::exceptions::exception& e) {
    throw tg::UsageError("--" + name + ": " + e.what());
  }
}

// Parses argv (after add_common_options). Returns false if --help was
// printed (the command should exit 0). Otherwise: any cxxopts complaint, a
// positional argument the command did not declare, or a bad --threads is a
// UsageError; the thread count is applied.
inline bool parse_or_help(cxxopts::Options& options, int argc, char** argv,
                          cxxopts::ParseResult* result) {
  const std::string cmd = options.program().substr(8);  // "tapegpt X" -> "X"
  try {
    *result = options.parse(argc, argv);
  } catch (const cxxopts::exceptions::exception& e) {
    throw tg::UsageError(std::string(e.what()) + "; see 'tapegpt " + cmd + " --help'");
  }
  if (result->count("help")) {
    std::fputs(options.help().c_str(), stdout);
    return false;
  }
  if (!result->unmatched().empty())
    throw tg::UsageError("unexpected argument '" + result->unmatched().front() +
                         "'; inputs are given with flags (see 'tapegpt " + cmd + " --help')");
  const std::string bad = threads_error(get<int>(*result, "threads"));
  if (!bad.empty()) throw tg::UsageError(bad);
  set_threads(get<int>(*result, "threads"));
  return true;
}

}  // namespace cli
