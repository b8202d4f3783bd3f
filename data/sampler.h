// Batch samplers: fill one micro-batch of inputs and next-token targets from
// a token file. Shapes: inputs[B*T] and targets[B*T], row-major (B rows of T);
// targets[b*T + t] is the token after inputs[b*T + t].
#pragma once

#include <cstdint>

#include "autograd/base/rng.h"
#include "data/token_file.h"

namespace data {

// Micro-batch k reads the B*T + 1 tokens starting at k*B*T: row b is tokens
// [k*B*T + b*T, +T) and its targets the same shifted by one. When a batch would
// run past the end of the file it starts over from token 0 (k = 0), so every
// token is visited in order, one epoch after another. position() is the next
// k; the trainer saves it in checkpoints and restores it with set_position().
class SequentialSampler {
 public:
  // Throws tg::DataError when the file has fewer than B*T + 1 tokens (or
  // fewer than T + 1), and tg::UsageError when B or T is not positive.
  SequentialSampler(const TokenFile& file, int64_t B, int64_t T);

  void fill(int32_t* inputs, int32_t* targets);
  // Moves on exactly as fill() would, reading nothing: a data-parallel rank
  // skips the micro-batches of the other ranks (Note [Data-parallel sharding]
  // in train/distributed/distributed.h).
  void skip() { next_start(); }
  int64_t position() const { return position_; }
  // Throws tg::DataError for a negative position (e.g. from a corrupt checkpoint).
  void set_position(int64_t k);

 private:
  int64_t next_start();  // the batch's first token; advances the position
  const TokenFile& file_;
  int64_t B_, T_;
  int64_t position_ = 0;
};

// Each of the B rows is a window of T + 1 tokens whose start is drawn
// uniformly from [0, N - T - 1] with rng.below(N - T). The only state is the
// caller's rng, which the trainer checkpoints.
class RandomSampler {
 public:
  // Throws tg::DataError when the file has fewer than T + 1 tokens, and
  // tg::UsageError when B or T is not positive.
  RandomSampler(const TokenFile& file, int64_t B, int64_t T);

  void fill(int32_t* inputs, int32_t* targets, tg::Rng& rng);
  // Draws from rng exactly what fill() would, reading nothing.
  void skip(tg::Rng& rng);

 private:
  const TokenFile& file_;
  int64_t B_, T_;
};

}  // namespace data
