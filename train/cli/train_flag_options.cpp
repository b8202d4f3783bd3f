// Training flags as cxxopts options (see train_flag_options.h).
#include "train/cli/train_flag_options.h"

#include <memory>

#include "train/cli/cli_util.h"

namespace cli {

void add_train_flag(cxxopts::OptionAdder& add, const train::TrainFlag& f, bool with_default) {
  using T = train::FlagType;
  std::shared_ptr<cxxopts::Value> v;
  switch (f.type) {
    case T::Int: v = cxxopts::value<int64_t>(); break;
    case T::UInt: v = cxxopts::value<uint64_t>(); break;
    case T::Real: v = cxxopts::value<double>(); break;
    case T::Text: v = cxxopts::value<std::string>(); break;
    case T::Switch: v = cxxopts::value<bool>(); break;
  }
  if (with_default && !f.default_text.empty()) v->default_value(f.default_text);
  add(f.name, f.help, v);
}

train::FlagValue train_flag_value(const cxxopts::ParseResult& r, const train::TrainFlag& f) {
  using T = train::FlagType;
  switch (f.type) {
    case T::Int: return get<int64_t>(r, f.name);
    case T::UInt: return static_cast<int64_t>(get<uint64_t>(r, f.name));
    case T::Real: return get<double>(r, f.name);
    case T::Text: return get<std::string>(r, f.name);
    case T::Switch: break;
  }
  return static_cast<int64_t>(r.count(f.name) > 0);
}

}  // namespace cli
