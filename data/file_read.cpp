// Whole-file reading with clear errors (see file_read.h).
#include "data/file_read.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "autograd/base/errors.h"

namespace data {

std::string file_read(const std::string& path, const std::string& what, int64_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw tg::DataError(what + " " + path + " cannot be read (" + std::strerror(errno) + "); check the path");
  }
  if (!S_ISREG(st.st_mode)) throw tg::DataError(what + " " + path + " is not a regular file");
  if (st.st_size > max_bytes) {
    throw tg::DataError(what + " " + path + " is " + std::to_string(st.st_size) + " bytes, more than the " +
                        std::to_string(max_bytes) + " allowed");
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw tg::DataError(what + " " + path + " cannot be opened (" + std::strerror(errno) + ")");
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  const size_t got = bytes.empty() ? 0 : std::fread(bytes.data(), 1, bytes.size(), f.get());
  if (got != bytes.size() || std::ferror(f.get())) {
    throw tg::DataError(what + " " + path + ": reading failed after " + std::to_string(got) + " bytes");
  }
  return bytes;
}

}  // namespace data
