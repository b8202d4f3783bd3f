// TempFile: the temporary file an atomic save writes before renaming it over
// the target, and the fsync/rename/fsync sequence that makes the swap durable.
#pragma once

#include <string>

namespace checkpoints {

// Note [Atomic save]: we write `<target>.tmp-<pid>` in the target's own
// directory (rename is atomic only within one filesystem), close it, fsync it
// so its data is on disk before the name points at it, rename it over the
// target, and fsync the directory so the rename itself survives a crash. At
// every instant the target is either the complete old file or the complete
// new one. Until commit() succeeds the destructor deletes the temporary file,
// so a failed save leaves nothing behind. Two saves to the same target from
// one process at once are not supported (they would share the temp name).
class TempFile {
 public:
  // Creates the empty temporary file, first removing the temporaries that
  // killed processes left for this target (their pid no longer exists);
  // throws tg::DataError when it cannot.
  explicit TempFile(const std::string& target);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return temp_; }
  // fsync the finished temporary file, rename it over the target, fsync the
  // directory. Throws tg::DataError; the target is untouched unless the
  // rename happened.
  void commit();

 private:
  std::string target_, temp_;
  bool committed_ = false;
};

// Gives the complete file `existing` a second name `target` (a hard link, so
// no copy and no extra space), atomically: a temporary link beside `target`
// is renamed over it and the directory fsynced, so `target` is at every
// instant absent, its old file, or `existing`'s. Returns false, changing
// nothing, where the filesystem has no hard links; throws tg::DataError on
// any other failure.
bool link_atomically(const std::string& existing, const std::string& target);

}  // namespace checkpoints
