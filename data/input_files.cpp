// --input expansion: files, directories, globs, "-" (see input_files.h).
#include "data/input_files.h"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "autograd/base/errors.h"

namespace data {
namespace {

namespace fs = std::filesystem;

bool is_hidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return !name.empty() && name[0] == '.';
}

// Regular files below `dir`, sorted, skipping hidden files and directories.
void expand_dir(const std::string& dir, const std::string& skip_dir, std::vector<std::string>& out) {
  std::vector<std::string> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code eq;
    const bool skip = !skip_dir.empty() && it->is_directory(eq) && fs::equivalent(it->path(), skip_dir, eq);
    if (is_hidden(it->path()) || skip) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec)) files.push_back(it->path().string());
  }
  if (ec) throw tg::DataError("input directory " + dir + " cannot be read (" + ec.message() + ")");
  if (files.empty()) throw tg::DataError("input directory " + dir + " holds no (non-hidden) files");
  std::sort(files.begin(), files.end());
  out.insert(out.end(), files.begin(), files.end());
}

void expand_existing(const std::string& path, const std::string& skip_dir, std::vector<std::string>& out) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    expand_dir(path, skip_dir, out);
  } else {
    out.push_back(path);  // a file, or something prepare will reject by name
  }
}

bool has_glob_chars(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

}  // namespace

std::vector<std::string> input_expand(const std::vector<std::string>& args, const std::string& skip_dir) {
  std::vector<std::string> out;
  bool stdin_seen = false;
  for (const std::string& arg : args) {
    if (arg == "-") {
      if (stdin_seen) throw tg::UsageError("--input - (standard input) can be given only once");
      stdin_seen = true;
      out.push_back(arg);
      continue;
    }
    struct stat st {};
    if (::stat(arg.c_str(), &st) == 0 || !has_glob_chars(arg)) {
      expand_existing(arg, skip_dir, out);
      continue;
    }
    glob_t g{};
    const int rc = ::glob(arg.c_str(), 0, nullptr, &g);
    std::vector<std::string> matches;
    if (rc == 0) matches.assign(g.gl_pathv, g.gl_pathv + g.gl_pathc);
    ::globfree(&g);
    if (rc == GLOB_NOMATCH || (rc == 0 && matches.empty())) {
      throw tg::DataError("--input '" + arg + "' matches no file; check the pattern (quote it so the shell leaves it to prepare)");
    }
    if (rc != 0) throw tg::DataError("--input '" + arg + "': listing the files it matches failed");
    for (const std::string& m : matches) expand_existing(m, skip_dir, out);  // glob() sorts them
  }
  return out;
}

}  // namespace data
