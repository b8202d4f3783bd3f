// Run directory contents and the resume-target check (see run_dir.h).
#include "train/run_dir.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <system_error>

#include "autograd/base/errors.h"

namespace fs = std::filesystem;

namespace train {

std::string periodic_name(int64_t step) { return "ckpt-" + std::to_string(step) + ".h5"; }

std::vector<std::pair<int64_t, std::string>> periodic_checkpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    // Exactly "ckpt-" digits ".h5": temporary files (".h5.tmp-PID") never match.
    if (name.size() < 9 || name.compare(0, 5, "ckpt-") != 0 ||
        name.compare(name.size() - 3, 3, ".h5") != 0)
      continue;
    const std::string digits = name.substr(5, name.size() - 8);
    if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos)
      continue;
    out.emplace_back(std::stoll(digits), it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void prune_periodic(const std::string& dir, int64_t keep, int64_t newest_step) {
  std::vector<std::pair<int64_t, std::string>> files = periodic_checkpoints(dir);
  files.erase(std::remove_if(files.begin(), files.end(),
                             [&](const auto& f) { return f.first > newest_step; }),
              files.end());
  const int64_t n = static_cast<int64_t>(files.size());
  // Oldest first: a kill part way leaves more than `keep`, never fewer.
  for (int64_t i = 0; i + keep < n; ++i) {
    std::error_code ec;
    fs::remove(files[static_cast<size_t>(i)].second, ec);
    if (ec)
      throw tg::DataError("cannot delete the old checkpoint " + files[static_cast<size_t>(i)].second +
                          ": " + ec.message() + "; check the run directory's permissions");
  }
}

namespace {

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  const bool same = fs::equivalent(a, b, ec);
  return !ec && same;
}

}  // namespace

void retire_old_run(const std::string& dir, const std::string& spare) {
  std::vector<std::string> old;
  for (const auto& f : periodic_checkpoints(dir)) old.push_back(f.second);
  for (const char* name : {"ckpt.h5", "best.h5"}) old.push_back((fs::path(dir) / name).string());
  for (const std::string& path : old) {
    if (!spare.empty() && same_file(path, spare)) continue;
    std::error_code ec;
    fs::remove(path, ec);
    if (ec)
      throw tg::DataError("cannot delete " + path + " of the run being replaced: " + ec.message() +
                          "; check the run directory's permissions");
  }
}

std::string checkpoint_dir(const std::string& ckpt_path) {
  const std::string parent = fs::path(ckpt_path).parent_path().string();
  return parent.empty() ? "." : parent;
}

bool same_directory(const std::string& a, const std::string& b) { return same_file(a, b); }

bool holds_run(const std::string& dir) {
  std::error_code ec;
  return fs::exists(fs::path(dir) / "ckpt.h5", ec) || !periodic_checkpoints(dir).empty();
}

std::string new_run_id() {
  std::random_device rd;
  const uint64_t id = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(id));
  return buf;
}

std::string run_identity(const checkpoints::TrainState& t) {
  if (!t.run_id.empty()) return "run " + t.run_id;
  return "the run started in " + t.run_dir + " with seed " + std::to_string(t.seed);
}

std::string other_run_in(const std::string& dir, const checkpoints::Checkpoint& resumed,
                         const std::string& resumed_path) {
  // The newest readable checkpoint in the directory says which run it holds:
  // ckpt.h5, else the periodic ones, newest first (a damaged ckpt.h5 must
  // not stop a resume from an older ckpt-STEP.h5 of the same run).
  std::vector<std::string> candidates;
  std::error_code ec;
  const std::string ckpt = (fs::path(dir) / "ckpt.h5").string();
  if (fs::exists(ckpt, ec)) candidates.push_back(ckpt);
  const auto periodic = periodic_checkpoints(dir);
  for (auto it = periodic.rbegin(); it != periodic.rend(); ++it) candidates.push_back(it->second);
  if (candidates.empty()) return "";  // holds no run
  for (const std::string& theirs : candidates) {
    if (same_file(theirs, resumed_path)) return "";
    std::string other;
    try {
      other = run_identity(checkpoints::read_metadata(theirs).train);
    } catch (const tg::DataError&) {
      continue;  // unreadable: look at the next one
    }
    return other == run_identity(resumed.train) ? "" : other + " in " + theirs;
  }
  return "a run whose checkpoints cannot be read (" + candidates.front() + ")";
}

}  // namespace train
