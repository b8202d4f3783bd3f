// Atomic file replacement: temp file, fsync, rename (see atomic_file.h).
#include "data/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "autograd/errors.h"

namespace data {
namespace {

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
  std::vector<char> tmpl(path.begin(), path.end());
  const std::string suffix = ".tmp.XXXXXX";
  tmpl.insert(tmpl.end(), suffix.begin(), suffix.end());
  tmpl.push_back('\0');
  const int fd = mkstemp(tmpl.data());
  if (fd < 0) {
    throw tg::DataError("cannot write " + path + ": creating a temporary file in " + dir_of(path) +
                        " failed (" + std::strerror(errno) + "); check the directory exists and is writable");
  }
  temp_path_ = tmpl.data();
  // mkstemp makes the file private (0600); give it a data file's usual mode.
  fchmod(fd, 0644);
  file_ = fdopen(fd, "wb");
  if (file_ == nullptr) {
    const int err = errno;
    ::close(fd);
    ::unlink(temp_path_.c_str());
    throw tg::DataError("cannot write " + path + ": " + std::strerror(err));
  }
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
  }
}

void AtomicFile::fail(const std::string& doing) {
  const int err = errno;
  discard();
  throw tg::DataError("cannot write " + path_ + ": " + doing + " failed (" + std::strerror(err) +
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
  if (!finished_) fail("publishing an unfinished file");
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) fail("renaming the temporary file");
  temp_path_.clear();
  // Make the rename itself durable; failing to sync the directory loses
  // nothing already written, so it is not an error.
  const int dir_fd = ::open(dir_of(path_).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

void atomic_write_file(const std::string& path, const std::string& bytes) {
  AtomicFile file(path);
  file.write(bytes.data(), bytes.size());
  file.commit();
}

}  // namespace data
