// The training run's batches: micro-batches of a token file drawn by the
// sampler --sampler names (data/sampler.h), as a BatchSource for TrainStep.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "data/sampler.h"
#include "train/train_step.h"

namespace train {

class TokenFileBatches : public BatchSource {
 public:
  // sampler: "random" (windows drawn with the run's rng) or "sequential"
  // (the file in order; `position` is where a resumed run continues).
  // Throws tg::DataError when the file is too short for one micro-batch.
  TokenFileBatches(const data::TokenFile& file, const std::string& sampler, int64_t B, int64_t T,
                   int64_t position);

  void fill(int32_t* inputs, int32_t* targets, tg::Rng& rng) override;
  // The sampler moves on as fill() would, reading no tokens.
  void skip(int32_t* inputs, int32_t* targets, tg::Rng& rng) override;

  // The sequential sampler's position, saved in checkpoints; the random
  // sampler keeps none and carries the one it was given.
  int64_t position() const { return sequential_ ? sequential_->position() : position_; }

 private:
  int64_t position_;
  std::unique_ptr<data::SequentialSampler> sequential_;
  std::unique_ptr<data::RandomSampler> random_;
};

}  // namespace train
