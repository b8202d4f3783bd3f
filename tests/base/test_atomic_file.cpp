// The one atomic-file module (Note [Atomic save], autograd/base/atomic_file.h):
// the stream writer publishes all or nothing, and follows the same
// temporary-name and clean-up rule as the checkpoint writer.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "autograd/base/atomic_file.h"
#include "autograd/base/errors.h"

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/tapegpt-atomic-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    DIR* d = ::opendir(path.c_str());
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
  }
};

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

TEST_CASE("AtomicFile: nothing is visible until commit, then all of it", "[base]") {
  TempDir dir;
  const std::string target = dir.path + "/out.bin";
  tg::atomic_write_file(target, "old");
  {
    tg::AtomicFile f(target);
    f.write("new contents", 12);
    f.rewrite_start("NEW", 3);
    CHECK(read_all(target) == "old");
    CHECK(dir.listing() == std::vector<std::string>{"out.bin", "out.bin.tmp-" + std::to_string(::getpid())});
    f.commit();
  }
  CHECK(read_all(target) == "NEW contents");
  CHECK(dir.listing() == std::vector<std::string>{"out.bin"});
}

TEST_CASE("AtomicFile: destruction without commit leaves the old file and no temporary", "[base]") {
  TempDir dir;
  const std::string target = dir.path + "/out.bin";
  tg::atomic_write_file(target, "old");
  {
    tg::AtomicFile f(target);
    f.write("half", 4);
  }
  CHECK(read_all(target) == "old");
  CHECK(dir.listing() == std::vector<std::string>{"out.bin"});
}

TEST_CASE("AtomicFile and TempFile remove dead processes' temporaries, not live ones", "[base]") {
  TempDir dir;
  const std::string target = dir.path + "/out.bin";
  // pid 999999999 cannot exist (Linux pids stay below 2^22); our parent does.
  const std::string dead = target + ".tmp-999999999", live = target + ".tmp-" + std::to_string(::getppid());
  for (const std::string* p : {&dead, &live}) std::ofstream(*p) << "left behind";
  tg::atomic_write_file(target, "x");
  CHECK(dir.listing() == std::vector<std::string>{"out.bin", "out.bin.tmp-" + std::to_string(::getppid())});
  std::ofstream(dead) << "left behind";
  tg::TempFile t(target);
  CHECK(::access(dead.c_str(), F_OK) != 0);
  CHECK(::access(live.c_str(), F_OK) == 0);
}

TEST_CASE("AtomicFile: a directory that does not exist is one DataError naming the file", "[base]") {
  TempDir dir;
  const std::string target = dir.path + "/missing/out.bin";
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
  const std::string a = dir.path + "/a", b = dir.path + "/b";
  tg::atomic_write_file(a, "payload");
  tg::atomic_write_file(b, "older");
  REQUIRE(tg::link_atomically(a, b));
  CHECK(read_all(b) == "payload");
  struct stat sa {}, sb {};
  REQUIRE(::stat(a.c_str(), &sa) == 0);
  REQUIRE(::stat(b.c_str(), &sb) == 0);
  CHECK(sa.st_ino == sb.st_ino);
  CHECK(dir.listing() == std::vector<std::string>{"a", "b"});
}
