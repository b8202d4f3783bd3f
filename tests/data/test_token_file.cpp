// Token files: round trips at both widths, rejection of damaged files, and
// atomic writes that leave an existing file intact on failure.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include "autograd/base/errors.h"
#include "data/token_file.h"
#include "tests/support/files.h"
#include "tests/support/no_skip.h"

namespace {

std::vector<int32_t> ramp(int64_t n, int64_t vocab) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>((i * 7919) % vocab);
  return t;
}

void write(const std::string& path, const std::vector<int32_t>& t, int64_t vocab) {
  data::token_file_write(path, t.data(), static_cast<int64_t>(t.size()), vocab);
}

void patch(std::string& bytes, size_t at, uint64_t v, int width) {
  for (int i = 0; i < width; ++i) bytes[at + i] = static_cast<char>(v >> (8 * i));
}

}  // namespace

TEST_CASE("token files round-trip with uint16 and uint32 tokens", "[token_file]") {
  testing::TempDir dir;
  for (int64_t vocab : {65, 65536, 65537, 100000}) {
    INFO("vocab " << vocab);
    const auto tokens = ramp(10000, vocab);
    write(dir.file("t.bin"), tokens, vocab);
    const data::TokenFile f(dir.file("t.bin"));
    CHECK(f.size() == 10000);
    CHECK(f.vocab_size() == vocab);
    CHECK(f.bytes_per_token() == (vocab <= 65536 ? 2 : 4));
    CHECK(testing::read_bytes(dir.file("t.bin")).size() == 32 + 10000 * static_cast<size_t>(f.bytes_per_token()));
    CHECK(f[0] == tokens[0]);
    CHECK(f[9999] == tokens[9999]);
    std::vector<int32_t> back(10000);
    f.copy(back.data(), 0, 10000);
    CHECK(back == tokens);
    std::vector<int32_t> mid(3);
    f.copy(mid.data(), 5000, 3);
    CHECK(mid == std::vector<int32_t>(tokens.begin() + 5000, tokens.begin() + 5003));
    CHECK(f.hash().size() == 16);
  }
  CHECK(testing::count_files(dir.path()) == 1);  // no temporaries left
}

TEST_CASE("token file hash identifies the content", "[token_file]") {
  testing::TempDir dir;
  write(dir.file("a.bin"), {1, 2, 3}, 10);
  write(dir.file("b.bin"), {1, 2, 3}, 10);
  write(dir.file("c.bin"), {1, 2, 4}, 10);
  write(dir.file("e.bin"), {}, 10);
  data::TokenFile a(dir.file("a.bin"));
  const data::TokenFile b(dir.file("b.bin")), c(dir.file("c.bin")), e(dir.file("e.bin"));
  CHECK(a.hash() == b.hash());
  CHECK(a.hash() != c.hash());
  CHECK(e.size() == 0);
  data::TokenFile moved(std::move(a));
  CHECK(moved[2] == 3);
}

TEST_CASE("token files that are damaged are rejected with a DataError", "[token_file]") {
  testing::TempDir dir;
  write(dir.file("good.bin"), ramp(100, 300), 300);
  const std::string good = testing::read_bytes(dir.file("good.bin"));
  const auto rejected = [&](const std::string& bytes, const char* why, const char* says) {
    INFO(why);
    testing::write_bytes(dir.file("bad.bin"), bytes);
    CHECK_THROWS_WITH(data::TokenFile(dir.file("bad.bin")), Catch::Contains(says) && Catch::Contains("bad.bin"));
  };
  rejected("", "empty", "truncated");
  rejected(good.substr(0, 20), "shorter than the header", "truncated");
  rejected(good.substr(0, good.size() - 2), "truncated tokens", "holds");
  rejected(good.substr(0, good.size() - 1), "odd length", "holds");
  rejected(good + "xx", "trailing bytes", "holds");
  std::string b = good;
  b[0] = 'X';
  rejected(b, "magic", "magic");
  b = good;
  patch(b, 8, 2, 4);
  rejected(b, "version", "version");
  b = good;
  patch(b, 12, 3, 4);
  rejected(b, "width", "bytes per token");
  b = good;
  patch(b, 16, 101, 8);
  rejected(b, "count too large", "holds");
  b = good;
  patch(b, 16, uint64_t{1} << 62, 8);
  rejected(b, "count overflowing", "holds");
  b = good;
  patch(b, 32 + 2 * 50, 300, 2);
  rejected(b, "id == vocab", "position 50");
  b = good;
  patch(b, 24, 70000, 4);
  rejected(b, "vocab too big for uint16", "vocabulary");
  b = good;
  patch(b, 24, 0, 4);
  rejected(b, "zero vocab", "vocabulary");
  CHECK_THROWS_AS(data::TokenFile(dir.file("missing.bin")), tg::DataError);
  CHECK_THROWS_AS(data::TokenFile(dir.path()), tg::DataError);  // a directory
}

TEST_CASE("token_file_write rejects ids outside the vocabulary", "[token_file]") {
  testing::TempDir dir;
  CHECK_THROWS_AS(write(dir.file("t.bin"), {1, 10}, 10), tg::DataError);
  CHECK_THROWS_AS(write(dir.file("t.bin"), {-1}, 10), tg::DataError);
  CHECK(testing::count_files(dir.path()) == 0);
}

TEST_CASE("a failed write leaves the existing file intact and no temporary", "[token_file]") {
  testing::TempDir dir;
  const std::string path = dir.file("train.bin");
  write(path, ramp(100, 50), 50);
  const std::string before = testing::read_bytes(path);

  SECTION("disk full (file size limit)") {
    // RLIMIT_FSIZE makes writes past 4 KiB fail with EFBIG, like a full disk,
    // and works even as root.
    struct rlimit old {};
    REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
    auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = old;
    small.rlim_cur = 4096;
    REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
    const auto big = ramp(100000, 50);
    bool threw = false;
    try {
      write(path, big, 50);
    } catch (const tg::DataError& e) {
      threw = true;
      CHECK_THAT(e.what(), Catch::Contains("train.bin"));
    }
    setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, old_handler);
    CHECK(threw);
  }
  SECTION("read-only directory") {
    // As root (CI) the write runs on a thread without root's permission
    // override, so the directory's mode applies to it too.
    REQUIRE(chmod(dir.path().c_str(), 0555) == 0);
    const std::string err = test_support::without_permission_override([&]() -> std::string {
      try {
        write(path, ramp(10, 50), 50);
      } catch (const tg::DataError& e) {
        return e.what();
      }
      return "";
    });
    chmod(dir.path().c_str(), 0755);
    INFO(err);
    CHECK(err.find("train.bin") != std::string::npos);
    CHECK(err.find("Permission denied") != std::string::npos);
  }
  SECTION("target directory missing") {
    CHECK_THROWS_AS(write(dir.file("no/such/dir.bin"), ramp(10, 50), 50), tg::DataError);
  }
  CHECK(testing::read_bytes(path) == before);
  CHECK(testing::count_files(dir.path()) == 1);
  CHECK(data::TokenFile(path).size() == 100);
}
