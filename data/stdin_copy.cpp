// Copying standard input to an unlinked file (see stdin_copy.h).
#include "data/stdin_copy.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <vector>

#include "autograd/base/errors.h"

namespace data {

StdinCopy::StdinCopy(const std::string& dir) {
  std::string tmpl = dir + "/.stdin.tmp.XXXXXX";
  fd_ = ::mkstemp(tmpl.data());
  if (fd_ < 0) {
    throw tg::DataError("cannot copy standard input into " + dir + " (" + std::strerror(errno) + ")");
  }
  ::unlink(tmpl.c_str());
  std::vector<char> buf(size_t{1} << 20);
  for (;;) {
    const ssize_t got = ::read(STDIN_FILENO, buf.data(), buf.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int err = errno;
      ::close(fd_);
      fd_ = -1;
      throw tg::DataError(std::string("reading standard input failed (") + std::strerror(err) + ")");
    }
    if (got == 0) break;
    for (ssize_t done = 0; done < got;) {
      const ssize_t put = ::write(fd_, buf.data() + done, static_cast<size_t>(got - done));
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) {
        const int err = errno;
        ::close(fd_);
        fd_ = -1;
        throw tg::DataError("cannot copy standard input into " + dir + " (" + std::strerror(err) +
                            "); free disk space there");
      }
      done += put;
    }
  }
}

StdinCopy::~StdinCopy() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace data
