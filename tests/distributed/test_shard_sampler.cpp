// Note [Data parallelism] in train/distributed/distributed.h: a rank that
// reads its own micro-batches and skips the others' sees exactly the
// batches, and ends with exactly the sampler position and RNG state, of a
// one-process run.
#include <catch2/catch.hpp>

#include <vector>

#include "autograd/base/rng.h"
#include "data/sampler.h"
#include "data/token_file.h"
#include "support/files.h"
#include "train/distributed/distributed.h"

namespace {

std::string counting_file(const testing::TempDir& dir, int n) {
  std::vector<int32_t> t(n);
  for (int i = 0; i < n; ++i) t[i] = (i * 7) % 31;
  const std::string path = dir.file("ids.bin");
  data::token_file_write(path, t.data(), n, 31);
  return path;
}

using Batch = std::vector<int32_t>;  // inputs then targets, then the dropout seed's low bits

// One step of K micro-batches as rank `rank` of `size` runs it (as
// Trainer::train_step does); the batches it read are appended to `out`.
template <class Fill, class Skip>
void step(int64_t K, int rank, int size, int64_t BT, tg::Rng& rng, Fill fill, Skip skip,
          std::vector<Batch>* out) {
  for (int64_t k = 0; k < K; ++k) {
    if (!train::owns_micro_batch(k, K, rank, size)) {
      skip();
      rng.next_u64();
      continue;
    }
    Batch b(2 * BT + 1);
    fill(b.data(), b.data() + BT);
    b[2 * BT] = static_cast<int32_t>(rng.next_u64() & 0x7fffffff);
    out->push_back(b);
  }
}

}  // namespace

TEST_CASE("ranks skipping the others' micro-batches see a one-process run's batches", "[distributed]") {
  testing::TempDir dir;
  const data::TokenFile f(counting_file(dir, 203));  // wraps around every few steps
  const int64_t B = 3, T = 5, K = 4, steps = 7;
  for (bool sequential : {true, false}) {
    for (int size : {1, 2, 4}) {
      INFO((sequential ? "sequential" : "random") << " sampler, " << size << " ranks");
      std::vector<Batch> one, shards;
      tg::Rng one_rng(42);
      data::SequentialSampler one_seq(f, B, T);
      data::RandomSampler one_rand(f, B, T);
      std::vector<tg::Rng> rngs(size, tg::Rng(42));
      std::vector<data::SequentialSampler> seqs(size, data::SequentialSampler(f, B, T));
      std::vector<data::RandomSampler> rands(size, data::RandomSampler(f, B, T));
      for (int64_t s = 0; s < steps; ++s) {
        auto fill_one = [&](int32_t* x, int32_t* y) {
          if (sequential) one_seq.fill(x, y);
          else one_rand.fill(x, y, one_rng);
        };
        step(K, 0, 1, B * T, one_rng, fill_one, [] {}, &one);
        std::vector<std::vector<Batch>> per_rank(size);
        for (int r = 0; r < size; ++r) {
          auto fill = [&](int32_t* x, int32_t* y) {
            if (sequential) seqs[r].fill(x, y);
            else rands[r].fill(x, y, rngs[r]);
          };
          auto skip = [&] {
            if (sequential) seqs[r].skip();
            else rands[r].skip(rngs[r]);
          };
          step(K, r, size, B * T, rngs[r], fill, skip, &per_rank[r]);
          // Every rank ends the step in the global state.
          REQUIRE(rngs[r].state() == one_rng.state());
          REQUIRE(seqs[r].position() == one_seq.position());
        }
        for (int r = 0; r < size; ++r) shards.insert(shards.end(), per_rank[r].begin(), per_rank[r].end());
      }
      REQUIRE(shards == one);
    }
  }
}
