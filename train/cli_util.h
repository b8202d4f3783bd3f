// Shared command-line helpers: parsing with cxxopts into UsageErrors, and
// the thread count.
#pragma once

#include <cxxopts.hpp>
#include <string>

#include "autograd/errors.h"

namespace cli {

// Parses argv; any cxxopts complaint becomes one UsageError line that points
// at --help. Returns false if --help was printed (the command should exit 0).
inline bool parse_or_help(cxxopts::Options& options, int argc, char** argv,
                          cxxopts::ParseResult* result) {
  try {
    *result = options.parse(argc, argv);
  } catch (const cxxopts::exceptions::exception& e) {
    throw tg::UsageError(std::string(e.what()) + "; see 'tapegpt " + options.program().substr(8) +
                         " --help'");
  }
  if (result->count("help")) {
    std::fputs(options.help().c_str(), stdout);
    return false;
  }
  return true;
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

// Sets OpenMP's (and OpenBLAS's, see kernels::set_blas_threads) thread count; 0 leaves
// the default (all cores).
void set_threads(int threads);

}  // namespace cli
