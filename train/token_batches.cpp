// The run's sampler as a BatchSource (see token_batches.h).
#include "train/token_batches.h"

namespace train {

TokenFileBatches::TokenFileBatches(const data::TokenFile& file, const std::string& sampler, int64_t B,
                                   int64_t T, int64_t position)
    : position_(position) {
  if (sampler == "sequential") {
    sequential_ = std::make_unique<data::SequentialSampler>(file, B, T);
    sequential_->set_position(position);
  } else {
    random_ = std::make_unique<data::RandomSampler>(file, B, T);
  }
}

void TokenFileBatches::skip(int32_t*, int32_t*, tg::Rng& rng) {
  if (sequential_) sequential_->skip();
  else random_->skip(rng);
}

void TokenFileBatches::fill(int32_t* inputs, int32_t* targets, tg::Rng& rng) {
  if (sequential_) sequential_->fill(inputs, targets);
  else random_->fill(inputs, targets, rng);
}

}  // namespace train
