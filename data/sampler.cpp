// Sequential and random batch samplers (see sampler.h).
#include "data/sampler.h"

#include <string>

#include "autograd/base/errors.h"

namespace data {
namespace {

void check_shape(const TokenFile& file, int64_t B, int64_t T) {
  if (B < 1 || T < 1) {
    throw tg::UsageError("batch size and block size must be positive (got " + std::to_string(B) + " and " +
                         std::to_string(T) + "); fix --batch-size or --block-size");
  }
  if (file.size() < T + 1) {
    throw tg::DataError(file.path() + ": corpus shorter than block_size+1 tokens (" + std::to_string(file.size()) +
                        " < " + std::to_string(T + 1) + "); use a smaller --block-size or more text");
  }
}

// One row from the T + 1 tokens at `start`: inputs are the first T, targets
// the last T. Copies straight from the mapping: no heap allocation per step.
void fill_row(const TokenFile& file, int64_t start, int64_t T, int32_t* inputs, int32_t* targets) {
  file.copy(inputs, start, T);
  file.copy(targets, start + 1, T);
}

}  // namespace

SequentialSampler::SequentialSampler(const TokenFile& file, int64_t B, int64_t T) : file_(file), B_(B), T_(T) {
  check_shape(file, B, T);
  if (file.size() < B * T + 1) {
    throw tg::DataError(file.path() + ": " + std::to_string(file.size()) +
                        " tokens are fewer than batch_size*block_size+1 = " + std::to_string(B * T + 1) +
                        " needed for one sequential batch; use a smaller --batch-size or --block-size, or more text");
  }
}

void SequentialSampler::set_position(int64_t k) {
  if (k < 0) throw tg::DataError("sequential sampler position " + std::to_string(k) + " is negative; the checkpoint is corrupt");
  position_ = k;
}

int64_t SequentialSampler::next_start() {
  const int64_t BT = B_ * T_;
  // Past the end (or a position saved against a longer file): start over.
  if (position_ > (file_.size() - 1) / BT || position_ * BT + BT + 1 > file_.size()) position_ = 0;
  return BT * position_++;
}

void SequentialSampler::fill(int32_t* inputs, int32_t* targets) {
  const int64_t start = next_start();
  for (int64_t b = 0; b < B_; ++b) fill_row(file_, start + b * T_, T_, inputs + b * T_, targets + b * T_);
}

RandomSampler::RandomSampler(const TokenFile& file, int64_t B, int64_t T) : file_(file), B_(B), T_(T) {
  check_shape(file, B, T);
}

void RandomSampler::fill(int32_t* inputs, int32_t* targets, tg::Rng& rng) {
  const auto starts = static_cast<uint64_t>(file_.size() - T_);  // valid starts: [0, N - T - 1]
  for (int64_t b = 0; b < B_; ++b) {
    const auto start = static_cast<int64_t>(rng.below(starts));
    fill_row(file_, start, T_, inputs + b * T_, targets + b * T_);
  }
}

void RandomSampler::skip(tg::Rng& rng) {
  const auto starts = static_cast<uint64_t>(file_.size() - T_);
  for (int64_t b = 0; b < B_; ++b) rng.below(starts);
}

}  // namespace data
