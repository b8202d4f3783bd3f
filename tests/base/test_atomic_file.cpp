// The one atomic-file module (Note [Atomic save], autograd/base/atomic_file.h):
// the stream writer publishes all or nothing, and follows the same
// temporary-name and clean-up rule as the checkpoint writer.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "autograd/base/atomic_file.h"
#include "autograd/base/errors.h"
#include "support/files.h"

using testing::read_bytes;
using testing::TempDir;

TEST_CASE("AtomicFile: nothing is visible until commit, then all of it", "[base]") {
  TempDir dir;
  const std::string target = dir.file("out.bin");
  tg::atomic_write_file(target, "old");
  {
    tg::AtomicFile f(target);
    f.write("new contents", 12);
    f.rewrite_start("NEW", 3);
    CHECK(read_bytes(target) == "old");
    CHECK(dir.listing() == "out.bin out.bin.tmp-" + std::to_string(::getpid()));
    f.commit();
  }
  CHECK(read_bytes(target) == "NEW contents");
  CHECK(dir.listing() == "out.bin");
}

TEST_CASE("AtomicFile: destruction without commit leaves the old file and no temporary", "[base]") {
  TempDir dir;
  const std::string target = dir.file("out.bin");
  tg::atomic_write_file(target, "old");
  {
    tg::AtomicFile f(target);
    f.write("half", 4);
  }
  CHECK(read_bytes(target) == "old");
  CHECK(dir.listing() == "out.bin");
}

TEST_CASE("AtomicFile and TempFile remove dead processes' temporaries, not live ones", "[base]") {
  TempDir dir;
  const std::string target = dir.file("out.bin");
  // pid 999999999 cannot exist (Linux pids stay below 2^22); our parent does.
  const std::string dead = target + ".tmp-999999999", live = target + ".tmp-" + std::to_string(::getppid());
  for (const std::string* p : {&dead, &live}) std::ofstream(*p) << "left behind";
  tg::atomic_write_file(target, "x");
  CHECK(dir.listing() == "out.bin out.bin.tmp-" + std::to_string(::getppid()));
  std::ofstream(dead) << "left behind";
  tg::TempFile t(target);
  CHECK(::access(dead.c_str(), F_OK) != 0);
  CHECK(::access(live.c_str(), F_OK) == 0);
}

TEST_CASE("AtomicFile: a directory that does not exist is one DataError naming the file", "[base]") {
  TempDir dir;
  const std::string target = dir.file("missing/out.bin");
  try {
    tg::AtomicFile f(target);
    FAIL("no error");
  } catch (const tg::DataError& e) {
    const std::string what = e.what();
    CHECK(what.rfind("cannot write " + target + ": cannot create ", 0) == 0);
    CHECK(what.find("check the directory exists and is writable") != std::string::npos);
  }
}

TEST_CASE("link_atomically gives a complete file a second name", "[base]") {
  TempDir dir;
  const std::string a = dir.file("a"), b = dir.file("b");
  tg::atomic_write_file(a, "payload");
  tg::atomic_write_file(b, "older");
  REQUIRE(tg::link_atomically(a, b));
  CHECK(read_bytes(b) == "payload");
  struct stat sa {}, sb {};
  REQUIRE(::stat(a.c_str(), &sa) == 0);
  REQUIRE(::stat(b.c_str(), &sb) == 0);
  CHECK(sa.st_ino == sb.st_ino);
  CHECK(dir.listing() == "a b");
}
