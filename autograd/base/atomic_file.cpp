// Temporary file, fsync, rename, fsync the directory (Note [Atomic save]).
#include "autograd/base/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "autograd/base/errors.h"

namespace tg {
namespace {

std::string errno_text() { return std::strerror(errno); }

std::string directory_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string temp_name_for(const std::string& target) { return target + ".tmp-" + std::to_string(::getpid()); }

// Deletes `<target>.tmp-<pid>` files whose process no longer exists. Files
// of live processes (another run saving now) are left alone.
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
    if (pid_text.empty() || pid_text.size() > 9 || pid_text.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid > 0 && ::kill(pid, 0) == -1 && errno == ESRCH) ::unlink((dir + "/" + name).c_str());
  }
  ::closedir(d);
}

// fsync a directory so a rename inside it survives a crash. Some filesystems
// cannot sync a directory (EINVAL, ENOTSUP): nothing more to do there.
void sync_directory(const std::string& target) {
  const std::string dir = directory_of(target);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return;
  const int rc = ::fsync(dfd);
  const int err = errno;
  ::close(dfd);
  if (rc != 0 && err != EINVAL && err != ENOTSUP)
    throw DataError("wrote " + target + " but cannot sync directory " + dir + ": " + std::strerror(err) +
                    "; the file may not survive a crash");
}

}  // namespace

TempFile::TempFile(const std::string& target) : target_(target), temp_(temp_name_for(target)) {
  remove_dead_temps(target);
  // A leftover with our pid can only be from a crashed earlier process.
  ::unlink(temp_.c_str());
  const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    published_ = true;  // nothing of ours to delete
    throw DataError("cannot create " + temp_ + ": " + errno_text() +
                    "; check the directory exists and is writable");
  }
  ::close(fd);
}

TempFile::~TempFile() {
  if (!published_) ::unlink(temp_.c_str());
}

void TempFile::commit() {
  const int fd = ::open(temp_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw DataError("cannot reopen " + temp_ + " to sync it: " + errno_text());
  if (::fsync(fd) != 0) {
    const std::string why = errno_text();
    ::close(fd);
    throw DataError("cannot sync " + temp_ + " to disk: " + why);
  }
  ::close(fd);
  publish();
}

void TempFile::publish() {
  if (std::rename(temp_.c_str(), target_.c_str()) != 0)
    throw DataError("cannot rename " + temp_ + " to " + target_ + ": " + errno_text());
  published_ = true;
  sync_directory(target_);
}

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
  try {
    temp_ = std::make_unique<TempFile>(path);
  } catch (const DataError& e) {
    throw DataError("cannot write " + path + ": " + e.what());
  }
  file_ = std::fopen(temp_->path().c_str(), "wb");
  if (file_ == nullptr) fail("opening the temporary file");
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
  temp_.reset();  // deletes the temporary file unless published
}

void AtomicFile::fail(const std::string& doing) {
  const int err = errno;
  discard();
  throw DataError("cannot write " + path_ + ": " + doing + " failed (" + std::strerror(err) +
                  "); the previous file, if any, is unchanged; free disk space or choose another directory");
}

void AtomicFile::write(const void* bytes, size_t n) {
  if (file_ == nullptr) fail("writing after an earlier error");
  if (n > 0 && std::fwrite(bytes, 1, n, file_) != n) fail("writing");
}

void AtomicFile::rewrite_start(const void* bytes, size_t n) {
  if (file_ == nullptr) fail("writing after an earlier error");
  if (std::fseek(file_, 0, SEEK_SET) != 0) fail("seeking");
  if (n > 0 && std::fwrite(bytes, 1, n, file_) != n) fail("writing");
  if (std::fseek(file_, 0, SEEK_END) != 0) fail("seeking");
}

void AtomicFile::commit() {
  finish();
  publish();
}

void AtomicFile::finish() {
  if (file_ == nullptr) fail("committing after an earlier error");
  if (std::fflush(file_) != 0) fail("flushing");
  if (::fsync(fileno(file_)) != 0) fail("fsync");
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) fail("closing");
  finished_ = true;
}

void AtomicFile::publish() {
  if (!finished_ || !temp_) fail("publishing an unfinished file");
  try {
    temp_->publish();
  } catch (const DataError& e) {
    discard();
    throw DataError("cannot write " + path_ + ": " + e.what());
  }
  temp_.reset();
}

void atomic_write_file(const std::string& path, const std::string& bytes) {
  AtomicFile file(path);
  file.write(bytes.data(), bytes.size());
  file.commit();
}

bool link_atomically(const std::string& existing, const std::string& target) {
  remove_dead_temps(target);
  const std::string temp = temp_name_for(target);
  ::unlink(temp.c_str());
  if (::link(existing.c_str(), temp.c_str()) != 0) {
    if (errno == EPERM || errno == EXDEV || errno == ENOTSUP || errno == EMLINK) return false;
    throw DataError("cannot link " + existing + " as " + temp + ": " + errno_text());
  }
  if (std::rename(temp.c_str(), target.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(temp.c_str());
    throw DataError("cannot rename " + temp + " to " + target + ": " + why);
  }
  sync_directory(target);
  return true;
}

}  // namespace tg
