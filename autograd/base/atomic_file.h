// Atomic file replacement, the one module every folder uses to write a file a
// user keeps (token files, tokenizer.json, checkpoints, metrics, pictures).
#pragma once

#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>

namespace tg {

// Note [Atomic save]: a file is written as `<target>.tmp-<pid>` in the
// target's own directory (rename is atomic only within one filesystem),
// fsynced so its data is on disk before the name points at it, renamed over
// the target, and the directory fsynced so the rename itself survives a
// crash. At every instant the target is either the complete old file or the
// complete new one.
// Clean-up rule: until it is published, the writer's destructor (and any
// failure) deletes its temporary file; and opening a temporary file for a
// target first deletes the `<target>.tmp-<pid>` files of processes that no
// longer exist (a save killed by SIGKILL or power loss leaves one, as large
// as the file it was writing). Two writers to the same target in one process
// at once are not supported (they would share the temporary name).

// TempFile: the temporary file alone, for writers that open it by path
// themselves (HDF5). Failures throw tg::DataError naming the path and reason.
class TempFile {
 public:
  explicit TempFile(const std::string& target);  // creates it empty
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return temp_; }
  const std::string& target() const { return target_; }
  // fsync the finished temporary file, then publish().
  void commit();
  // Rename it over the target and fsync the directory. The target is
  // untouched unless the rename happened.
  void publish();

 private:
  std::string target_, temp_;
  bool published_ = false;
};

// AtomicFile: a TempFile written as a stream. write() appends; commit()
// flushes, fsyncs, closes and publishes. Any failure throws tg::DataError
// naming the path, the system's reason and the fix, and removes the
// temporary file; so does destruction without commit().
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
  std::unique_ptr<TempFile> temp_;  // null once discarded or published
  std::FILE* file_ = nullptr;
  bool finished_ = false;
};

// Writes `bytes` to `path` atomically (one AtomicFile, written and committed).
void atomic_write_file(const std::string& path, const std::string& bytes);

// Gives the complete file `existing` a second name `target` (a hard link, so
// no copy and no extra space), atomically: a temporary link beside `target`
// is renamed over it and the directory fsynced, so `target` is at every
// instant absent, its old file, or `existing`'s. Returns false, changing
// nothing, where the filesystem has no hard links; throws tg::DataError on
// any other failure.
bool link_atomically(const std::string& existing, const std::string& target);

}  // namespace tg
