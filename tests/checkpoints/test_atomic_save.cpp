// Failed saves: whatever goes wrong, the previous checkpoint stays loadable
// and byte-identical and no temporary file is left (Note [Atomic save]).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "autograd/base/errors.h"
#include "tests/checkpoints/fixtures.h"
#include "tests/support/no_skip.h"

using namespace checkpoints_test;

namespace {

// An existing checkpoint and a different model we will fail to save over it.
struct Existing {
  TempDir dir;
  std::string path = dir.file("ckpt.h5");
  nn::GPTConfig config = tiny_checkpoint_config();
  checkpoints::Checkpoint meta = full_meta(config);
  nn::ParameterStore old_store = filled_store(config, 1);
  nn::ParameterStore new_store = filled_store(config, 2);
  std::string old_bytes;
  Existing() {
    checkpoints::save_checkpoint(path, meta, old_store);
    old_bytes = read_bytes(path);
  }
  void require_untouched() {
    CHECK(dir.listing() == "ckpt.h5");
    CHECK(read_bytes(path) == old_bytes);
    checkpoints::Loaded loaded = checkpoints::load_checkpoint(path);
    CHECK(same_bits(loaded.store, old_store, Buffer::Params));
  }
};

std::string save_error(const std::string& path, const checkpoints::Checkpoint& meta,
                       const nn::ParameterStore& store) {
  try {
    checkpoints::save_checkpoint(path, meta, store);
  } catch (const tg::DataError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a save into a read-only directory fails cleanly", "[checkpoints]") {
  // As root (CI) the save runs on a thread without root's permission
  // override, so the directory's mode applies to it too.
  Existing e;
  REQUIRE(chmod(e.dir.path().c_str(), 0555) == 0);
  const std::string err =
      test_support::without_permission_override([&] { return save_error(e.path, e.meta, e.new_store); });
  chmod(e.dir.path().c_str(), 0755);
  INFO(err);
  CHECK(err.find("Permission denied") != std::string::npos);
  e.require_untouched();
}

TEST_CASE("a save whose temporary name is blocked fails cleanly", "[checkpoints]") {
  Existing e;
  const std::string blocker = e.path + ".tmp-" + std::to_string(getpid());
  REQUIRE(mkdir(blocker.c_str(), 0755) == 0);
  const std::string err = save_error(e.path, e.meta, e.new_store);
  INFO(err);
  CHECK(err.rfind("checkpoint " + e.path + ": cannot save: cannot create", 0) == 0);
  CHECK(read_bytes(e.path) == e.old_bytes);
  rmdir(blocker.c_str());
  e.require_untouched();
}

TEST_CASE("a save into a missing directory fails cleanly", "[checkpoints]") {
  TempDir dir;
  const nn::GPTConfig config = tiny_checkpoint_config();
  const std::string err = save_error(dir.file("no/such/dir/ckpt.h5"), full_meta(config), filled_store(config, 1));
  CHECK(err.find("No such file or directory") != std::string::npos);
  CHECK(dir.listing().empty());
}

TEST_CASE("save refuses contents it could not load back", "[checkpoints]") {
  Existing e;
  checkpoints::Checkpoint bad = e.meta;
  bad.tokenizer.merges = {{0, 50}};
  CHECK(save_error(e.path, bad, e.new_store).find("outside [0, 11)") != std::string::npos);
  bad = e.meta;
  bad.train.flags.push_back(bad.train.flags.front());
  CHECK(save_error(e.path, bad, e.new_store).find("appears twice") != std::string::npos);
  bad = e.meta;
  bad.train.run_dir = std::string("a\0b", 3);
  CHECK(save_error(e.path, bad, e.new_store).find("NUL byte") != std::string::npos);
  e.require_untouched();
}

TEST_CASE("a save that hits a full disk fails cleanly at any point", "[checkpoints]") {
  // A bigger model, so the limits below fall in metadata, in the middle of
  // the tensors and at the very last bytes HDF5 writes on close.
  TempDir dir;
  const std::string path = dir.file("ckpt.h5");
  nn::GPTConfig config = tiny_checkpoint_config();
  config.n_embd = 32;
  const checkpoints::Checkpoint meta = full_meta(config);
  const nn::ParameterStore old_store = filled_store(config, 1);
  const nn::ParameterStore new_store = filled_store(config, 2);
  checkpoints::save_checkpoint(path, meta, old_store);
  const std::string old_bytes = read_bytes(path);
  const rlim_t size = old_bytes.size();

  for (rlim_t limit : {rlim_t{0}, rlim_t{1000}, rlim_t{5000}, size / 2, size - 64, size - 1}) {
    INFO("file size limit " << limit << " of " << size);
    // RLIMIT_FSIZE stands in for a full disk; it applies to the whole
    // process, so the save runs in a child. With SIGXFSZ ignored, write()
    // fails with EFBIG instead of killing the child.
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      signal(SIGXFSZ, SIG_IGN);
      struct rlimit rl = {limit, limit};
      setrlimit(RLIMIT_FSIZE, &rl);
      int code = 3;
      try {
        checkpoints::save_checkpoint(path, meta, new_store);
        code = 1;  // it should not have fitted
      } catch (const tg::DataError& err) {
        const std::string what = err.what();
        code = what.rfind("checkpoint " + path + ": cannot save: ", 0) == 0 ? 0 : 2;
      } catch (...) {
        code = 4;
      }
      _exit(code);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(dir.listing() == "ckpt.h5");
    CHECK(read_bytes(path) == old_bytes);
  }
  checkpoints::Loaded loaded = checkpoints::load_checkpoint(path);
  CHECK(same_bits(loaded.store, old_store, Buffer::Params));
}

TEST_CASE("a save removes temporary files of dead processes, not of live ones", "[checkpoints]") {
  Existing e;
  // A save killed mid-write leaves <target>.tmp-<pid>; pid 999999999 cannot
  // exist (Linux pids stay below 2^22), our parent's pid does.
  const std::string dead = e.path + ".tmp-999999999";
  const std::string live = e.path + ".tmp-" + std::to_string(::getppid());
  write_bytes(dead, "half a checkpoint");
  write_bytes(live, "another process saving now");
  checkpoints::save_checkpoint(e.path, e.meta, e.new_store);
  CHECK(e.dir.listing() == "ckpt.h5 ckpt.h5.tmp-" + std::to_string(::getppid()));
  ::unlink(live.c_str());
}
