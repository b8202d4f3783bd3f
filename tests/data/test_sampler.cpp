// Batch samplers: sequential batches walk the file and wrap as specified,
// random batches are windows at uniform starts, repeatable from the rng state.
#include <catch2/catch.hpp>

#include <set>

#include "autograd/base/errors.h"
#include "autograd/base/rng.h"
#include "data/sampler.h"
#include "data/token_file.h"
#include "support/files.h"

namespace {

// A file whose token i is i, so every batch shows where it came from.
std::string identity_file(const testing::TempDir& dir, int n) {
  std::vector<int32_t> t(n);
  for (int i = 0; i < n; ++i) t[i] = i;
  const std::string path = dir.file("ids.bin");
  data::token_file_write(path, t.data(), n, n);
  return path;
}

std::vector<int32_t> range(int from, int n) {
  std::vector<int32_t> v(n);
  for (int i = 0; i < n; ++i) v[i] = from + i;
  return v;
}

}  // namespace

TEST_CASE("sequential batches walk the file and start over at the end", "[sampler]") {
  testing::TempDir dir;
  const data::TokenFile f(identity_file(dir, 20));
  const int B = 2, T = 3;
  data::SequentialSampler s(f, B, T);
  std::vector<int32_t> x(B * T), y(B * T);
  // batch k reads tokens [6k, 6k + 7); batch 3 would need [18, 25) > 20.
  for (int k : {0, 1, 2, 0, 1}) {
    INFO("expected batch " << k);
    s.fill(x.data(), y.data());
    CHECK(x == range(6 * k, 6));
    CHECK(y == range(6 * k + 1, 6));
  }
  CHECK(s.position() == 2);

  // Restoring the position (as from a checkpoint) continues the same stream.
  data::SequentialSampler resumed(f, B, T);
  resumed.set_position(2);
  resumed.fill(x.data(), y.data());
  CHECK(x == range(12, 6));
  resumed.set_position(1000);  // saved against a longer file: starts over
  resumed.fill(x.data(), y.data());
  CHECK(x == range(0, 6));
  CHECK(resumed.position() == 1);
  CHECK_THROWS_AS(resumed.set_position(-1), tg::DataError);
}

TEST_CASE("sequential batch exactly fitting the file", "[sampler]") {
  testing::TempDir dir;
  const data::TokenFile f(identity_file(dir, 7));
  data::SequentialSampler s(f, 2, 3);
  std::vector<int32_t> x(6), y(6);
  s.fill(x.data(), y.data());
  s.fill(x.data(), y.data());
  CHECK(x == range(0, 6));
  CHECK(y == range(1, 6));
}

TEST_CASE("samplers reject a corpus shorter than block_size+1", "[sampler]") {
  testing::TempDir dir;
  const data::TokenFile f(identity_file(dir, 8));
  CHECK_THROWS_WITH(data::RandomSampler(f, 4, 8), Catch::Contains("block_size+1"));
  CHECK_THROWS_WITH(data::SequentialSampler(f, 1, 8), Catch::Contains("block_size+1"));
  CHECK_NOTHROW(data::RandomSampler(f, 4, 7));
  CHECK_THROWS_AS(data::SequentialSampler(f, 2, 7), tg::DataError);  // needs 15 tokens
  CHECK_THROWS_AS(data::RandomSampler(f, 0, 4), tg::UsageError);
}

TEST_CASE("random batches are windows at uniform starts, repeatable by seed", "[sampler]") {
  testing::TempDir dir;
  const int N = 50, B = 4, T = 5;
  const data::TokenFile f(identity_file(dir, N));
  data::RandomSampler s(f, B, T);
  std::vector<int32_t> x(B * T), y(B * T), x2(B * T), y2(B * T);

  tg::Rng a(42), b(42), c(43);
  s.fill(x.data(), y.data(), a);
  s.fill(x2.data(), y2.data(), b);
  CHECK(x == x2);
  CHECK(y == y2);
  s.fill(x2.data(), y2.data(), c);
  CHECK(x != x2);

  std::set<int32_t> starts;
  tg::Rng rng(1);
  for (int i = 0; i < 400; ++i) {
    s.fill(x.data(), y.data(), rng);
    for (int r = 0; r < B; ++r) {
      const int32_t start = x[r * T];
      CHECK(start >= 0);
      CHECK(start <= N - T - 1);
      starts.insert(start);
      for (int t = 0; t < T; ++t) {
        CHECK(x[r * T + t] == start + t);
        CHECK(y[r * T + t] == start + t + 1);
      }
    }
  }
  CHECK(starts.size() == static_cast<size_t>(N - T));  // every start, the last one included

  // The rng state is all there is: saving and restoring it repeats the batch.
  const auto state = rng.state();
  s.fill(x.data(), y.data(), rng);
  tg::Rng restored;
  restored.set_state(state);
  s.fill(x2.data(), y2.data(), restored);
  CHECK(x == x2);
}
