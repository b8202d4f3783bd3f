// HDF5 error plumbing: silencing the default printer and reading the stack.
#include "checkpoints/h5_handle.h"

#include "autograd/base/errors.h"

namespace checkpoints {

QuietErrors::QuietErrors() {
  // HDF5 1.10 leaks a little internal state when it meets a corrupt object
  // header; its atexit clean-up then loops and prints "infinite loop closing
  // library" as the process ends. We close every file before returning, so
  // the clean-up has nothing to do for us: skip it. (Takes effect only if
  // this is the first HDF5 call of the process; harmless otherwise.)
  H5dont_atexit();
  H5Eget_auto2(H5E_DEFAULT, &old_func_, &old_data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, old_func_, old_data_); }

namespace {

// H5Ewalk2 callback: walking upward, the first entry is the innermost one.
herr_t take_first(unsigned n, const H5E_error2_t* err, void* out) {
  if (n == 0 && err && err->desc) *static_cast<std::string*>(out) = err->desc;
  return 0;
}

}  // namespace

std::string h5_error_detail() {
  std::string detail;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, take_first, &detail);
  H5Eclear2(H5E_DEFAULT);
  // Keep the message on one line whatever HDF5 put in it.
  for (char& c : detail)
    if (c == '\n' || c == '\r') c = ' ';
  return detail;
}

void throw_h5_error(const std::string& what) {
  std::string detail = h5_error_detail();
  throw tg::DataError(detail.empty() ? what : what + " (" + detail + ")");
}

Handle checked(hid_t id, Handle::Closer closer, const std::string& what) {
  if (id < 0) throw_h5_error(what);
  return Handle(id, closer);
}

void check_status(herr_t status, const std::string& what) {
  if (status < 0) throw_h5_error(what);
}

}  // namespace checkpoints
