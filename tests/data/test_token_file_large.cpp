// Token files past 4 GiB and 2^31 tokens: a sparse file (a few KiB of real
// disk) with 2^31 + 40 two-byte tokens is opened, read at the far end,
// sampled from and checked, so no 32-bit size or index hides anywhere.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "autograd/base/rng.h"
#include "data/sampler.h"
#include "data/token_file.h"
#include "support/files.h"

namespace {

constexpr int64_t kTokens = (int64_t{1} << 31) + 40;  // 4 GiB + 80 bytes of tokens
constexpr int64_t kVocab = 65536;

void put_token(int fd, int64_t i, uint16_t id) {
  const unsigned char b[2] = {static_cast<unsigned char>(id), static_cast<unsigned char>(id >> 8)};
  REQUIRE(::pwrite(fd, b, 2, data::kTokenFileHeaderBytes + 2 * i) == 2);
}

}  // namespace

TEST_CASE("a token file of more than 2^31 tokens and 4 GiB opens and reads everywhere", "[token_file][large]") {
  testing::TempDir dir;
  const std::string path = dir.file("big.bin");
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  unsigned char header[data::kTokenFileHeaderBytes];
  data::token_file_header(header, kTokens, kVocab);
  REQUIRE(::pwrite(fd, header, sizeof header, 0) == static_cast<ssize_t>(sizeof header));
  // Sparse: only the header and the marked tokens take disk; the rest reads as 0.
  REQUIRE(::ftruncate(fd, data::kTokenFileHeaderBytes + 2 * kTokens) == 0);
  const int64_t past_int32 = (int64_t{1} << 31) + 5;  // index past INT32_MAX
  const int64_t past_4gib = (int64_t{1} << 31) + 30;  // byte offset past 2^32
  put_token(fd, past_int32, 65535);
  put_token(fd, past_4gib, 12345);
  put_token(fd, kTokens - 1, 777);
  ::close(fd);

  const data::TokenFile f(path);  // validates (and hashes) all 4 GiB
  CHECK(f.size() == kTokens);
  CHECK(f[past_int32] == 65535);
  CHECK(f[past_4gib] == 12345);
  CHECK(f[kTokens - 1] == 777);
  CHECK(f[past_int32 - 1] == 0);
  int32_t tail[3];
  f.copy(tail, kTokens - 3, 3);
  CHECK(tail[2] == 777);

  // A sequential sampler positioned at the far end reads the marked tokens.
  const int64_t B = 1, T = 8;
  data::SequentialSampler seq(f, B, T);
  seq.set_position(past_int32 / (B * T));  // batch holding token past_int32
  int32_t in[8], tg[8];
  seq.fill(in, tg);
  CHECK(in[past_int32 % 8] == 65535);
  CHECK(seq.position() == past_int32 / 8 + 1);

  // Random windows: starts are drawn from [0, N - T - 1] in 64 bits (about
  // half of them past 2^30 here), and every window reads valid ids.
  data::RandomSampler rnd(f, B, T);
  tg::Rng rng(1);
  for (int i = 0; i < 50; ++i) {
    int32_t rin[8], rtg[8];
    rnd.fill(rin, rtg, rng);
    for (int32_t v : rin) REQUIRE((v >= 0 && v < kVocab));
  }
  int64_t high = 0;
  for (int i = 0; i < 200; ++i) high += rng.below(static_cast<uint64_t>(kTokens - T)) > (uint64_t{1} << 30);
  CHECK(high > 50);

  // A header that claims more tokens than the (4 GiB) file holds is refused.
  const int fd2 = ::open(path.c_str(), O_WRONLY);
  data::token_file_header(header, kTokens + 1, kVocab);
  REQUIRE(::pwrite(fd2, header, sizeof header, 0) == static_cast<ssize_t>(sizeof header));
  ::close(fd2);
  CHECK_THROWS_WITH(data::TokenFile(path), Catch::Contains("truncated or padded"));
}
