// Output checks for the visualisation commands (see output_files.h).
#include "train/output_files.h"

#include <filesystem>
#include <system_error>

#include "autograd/base/errors.h"

namespace cli {

void make_output_dir(const std::string& dir, const std::string& flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw tg::UsageError(flag + " " + dir + " exists and is not a directory; choose a directory");
  fs::create_directories(dir, ec);
  if (ec) throw tg::DataError("cannot create " + dir + ": " + ec.message() + "; choose another " + flag);
}

void refuse_existing(const std::vector<std::string>& paths, bool overwrite) {
  if (overwrite) return;
  std::error_code ec;
  for (const std::string& p : paths)
    if (std::filesystem::exists(p, ec))
      throw tg::UsageError(p + " already exists; choose another output or pass --overwrite to replace it");
}

}  // namespace cli
