// The temporary file and durable rename behind atomic saves (Note [Atomic save]).
#include "checkpoints/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "autograd/errors.h"

namespace checkpoints {

namespace {

std::string errno_text() { return std::strerror(errno); }

std::string directory_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Deletes `<target>.tmp-<pid>` files whose process no longer exists: a save
// killed mid-write (SIGKILL, power loss) leaves one, as large as a whole
// checkpoint, and the next process has another pid so would never reuse it.
// Files of live processes (another run saving now) are left alone.
void remove_dead_temps(const std::string& target) {
  const std::string dir = directory_of(target);
  const size_t slash = target.find_last_of('/');
  const std::string prefix = (slash == std::string::npos ? target : target.substr(slash + 1)) + ".tmp-";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string pid_text = name.substr(prefix.size());
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    if (pid_text.size() > 9) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid > 0 && ::kill(pid, 0) == -1 && errno == ESRCH) ::unlink((dir + "/" + name).c_str());
  }
  ::closedir(d);
}

}  // namespace

TempFile::TempFile(const std::string& target)
    : target_(target), temp_(target + ".tmp-" + std::to_string(::getpid())) {
  remove_dead_temps(target);
  // A leftover with our pid can only be from a crashed earlier process.
  ::unlink(temp_.c_str());
  int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    committed_ = true;  // nothing of ours to delete
    throw tg::DataError("cannot create " + temp_ + ": " + errno_text());
  }
  ::close(fd);
}

TempFile::~TempFile() {
  if (!committed_) ::unlink(temp_.c_str());
}

namespace {

// fsync a directory so a rename inside it survives a crash. Some filesystems
// cannot sync a directory (EINVAL): nothing more to do there.
void sync_directory(const std::string& dir, const std::string& target) {
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return;
  int rc = ::fsync(dfd);
  int err = errno;
  ::close(dfd);
  if (rc != 0 && err != EINVAL && err != ENOTSUP)
    throw tg::DataError("saved " + target + " but cannot sync directory " + dir + ": " +
                        std::strerror(err) + "; the save may not survive a crash");
}

}  // namespace

bool link_atomically(const std::string& existing, const std::string& target) {
  remove_dead_temps(target);
  const std::string temp = target + ".tmp-" + std::to_string(::getpid());
  ::unlink(temp.c_str());
  if (::link(existing.c_str(), temp.c_str()) != 0) {
    if (errno == EPERM || errno == EXDEV || errno == ENOTSUP || errno == EMLINK)
      return false;
    throw tg::DataError("cannot link " + existing + " as " + temp + ": " + errno_text());
  }
  if (std::rename(temp.c_str(), target.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(temp.c_str());
    throw tg::DataError("cannot rename " + temp + " to " + target + ": " + why);
  }
  sync_directory(directory_of(target), target);
  return true;
}

void TempFile::commit() {
  int fd = ::open(temp_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw tg::DataError("cannot reopen " + temp_ + " to sync it: " + errno_text());
  if (::fsync(fd) != 0) {
    std::string why = errno_text();
    ::close(fd);
    throw tg::DataError("cannot sync " + temp_ + " to disk: " + why);
  }
  ::close(fd);
  if (std::rename(temp_.c_str(), target_.c_str()) != 0)
    throw tg::DataError("cannot rename " + temp_ + " to " + target_ + ": " + errno_text());
  committed_ = true;
  // The new file is in place; syncing the directory makes the rename durable.
  sync_directory(directory_of(target_), target_);
}

}  // namespace checkpoints
