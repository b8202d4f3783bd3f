// Handle: RAII ownership of one HDF5 identifier, plus the error plumbing that
// turns HDF5's silent failures into one readable line (Note [HDF5 errors]).
#pragma once

#include <hdf5.h>

#include <string>
#include <utility>

namespace checkpoints {

// Note [HDF5 errors]: HDF5 prints its whole error stack to stderr by default.
// We switch that off for the duration of every save and load (QuietErrors),
// check every return value ourselves, and put the innermost HDF5 message
// (h5_error_detail) into the tg::DataError we throw, so the user sees one line
// that names the file and the problem.

// One HDF5 id and the function that releases it (H5Fclose, H5Gclose, ...).
// Move-only; the destructor closes it, so an exception anywhere leaks nothing.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept { swap(o); }
  Handle& operator=(Handle&& o) noexcept { swap(o); return *this; }
  ~Handle() { close(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Releases the id now; returns the closer's status (a file's H5Fclose is
  // where HDF5 writes its last metadata, so saving checks this).
  herr_t close() {
    herr_t status = 0;
    if (id_ >= 0 && closer_) status = closer_(id_);
    id_ = -1;
    return status;
  }

 private:
  void swap(Handle& o) { std::swap(id_, o.id_); std::swap(closer_, o.closer_); }
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// An open group or dataset together with its path inside the file ("/",
// "/config", "/model/transformer.wte.weight"), which every message names.
struct Node {
  Handle handle;
  std::string path;
  hid_t id() const { return handle.get(); }
};

// The path of `name` inside `parent`, for messages.
inline std::string child_path(const Node& parent, const std::string& name) {
  return parent.path == "/" ? "/" + name : parent.path + "/" + name;
}

// Silences HDF5's automatic error printing for the lifetime of the object and
// restores whatever was installed before (the library default elsewhere).
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t old_func_ = nullptr;
  void* old_data_ = nullptr;
};

// The innermost message on HDF5's error stack (where the failure was first
// detected, e.g. "truncated file: eof = 1000, ..."), then clears the stack.
// Empty when the stack is empty.
std::string h5_error_detail();

// Throws tg::DataError(what + " (" + detail + ")"), or just `what` when the
// stack is empty.
[[noreturn]] void throw_h5_error(const std::string& what);
// Throws tg::DataError(what + detail) when id < 0, else wraps it in a Handle.
Handle checked(hid_t id, Handle::Closer closer, const std::string& what);
// Throws tg::DataError(what + detail) when status < 0.
void check_status(herr_t status, const std::string& what);

}  // namespace checkpoints
