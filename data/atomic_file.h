// AtomicFile: writes a file so that a crash or error at any moment leaves
// either the old file or the complete new one, never a torn one.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace data {

// Writes go to a temporary file in the target's directory (so rename stays on
// one filesystem); commit() flushes, fsyncs and renames it over the target.
// Any failure throws tg::DataError naming the path and the system's reason,
// and removes the temporary file; so does destruction without commit().
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* bytes, size_t n);
  // Overwrites the first n bytes written so far (a header whose counts are
  // known only at the end); later writes still append.
  void rewrite_start(const void* bytes, size_t n);
  void commit();  // finish() then publish()
  // The two halves of commit(), for replacing several files together: finish
  // every file (flushed, fsynced, closed) before publishing (renaming) any.
  void finish();
  void publish();

 private:
  [[noreturn]] void fail(const std::string& doing);
  void discard();

  std::string path_;
  std::string temp_path_;
  std::FILE* file_ = nullptr;
  bool finished_ = false;
};

// Writes `bytes` to `path` atomically (one AtomicFile, written and committed).
void atomic_write_file(const std::string& path, const std::string& bytes);

}  // namespace data
