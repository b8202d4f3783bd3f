// Skips that cannot hide in CI (see tests/support/no_skip.py): under
// TAPEGPT_NO_SKIP=1, which scripts/test.sh exports, a check that cannot run
// fails; otherwise it may WARN and skip. And the means to run permission
// checks as root: root ignores file permission bits through three
// capabilities, which a thread can drop for itself alone.
#pragma once

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

namespace test_support {

inline bool no_skip() {
  const char* v = std::getenv("TAPEGPT_NO_SKIP");
  return v != nullptr && std::string(v) == "1";
}

// Drops CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER from the
// calling thread's effective set. Linux keeps capabilities per thread and
// the raw capset syscall (glibc has no wrapper that would broadcast it)
// changes only the caller, so the rest of the process keeps them.
inline bool drop_permission_override() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  for (int cap : {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER})
    data[cap / 32].effective &= ~(1u << (cap % 32));
  return syscall(SYS_capset, &header, data) == 0;
}

// Returns f() computed as an unprivileged user would see the filesystem:
// directly when not root, else on a thread without the permission override
// (uid 0 stays the owner, so the owner's permission bits apply). Exceptions
// from f are rethrown here; keep Catch2 assertions out of f (they are not
// thread-safe) and check its result instead.
template <class F>
auto without_permission_override(F f) -> decltype(f()) {
  if (geteuid() != 0) return f();
  decltype(f()) result{};
  std::exception_ptr error;
  bool dropped = false;
  std::thread worker([&] {
    dropped = drop_permission_override();
    if (!dropped) return;
    try {
      result = f();
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (!dropped) throw std::runtime_error("cannot drop CAP_DAC_OVERRIDE for a permission test");
  if (error) std::rethrow_exception(error);
  return result;
}

}  // namespace test_support
