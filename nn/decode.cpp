// Decoder implementation (see decode.h).
#include "nn/decode.h"

#include <algorithm>

namespace nn {

Decoder::Decoder(const GPT& model) : model_(model), cache_(model.config) {
  history_.reserve(static_cast<size_t>(model.config.block_size));
}

const float* Decoder::feed(const int32_t* ids, int64_t n) {
  TG_CHECK(n >= 1);
  const int64_t T = model_.config.block_size;
  const float* logits = nullptr;
  while (n > 0) {
    if (length() == T) {
      // Full: keep the newest half and re-encode it from position 0.
      const std::vector<int32_t> recent(history_.end() - T / 2, history_.end());
      reset();
      if (!recent.empty()) forward(recent.data(), static_cast<int64_t>(recent.size()));
    }
    const int64_t take = std::min(n, T - length());
    logits = forward(ids, take);
    ids += take;
    n -= take;
  }
  return logits;
}

const float* Decoder::forward(const int32_t* ids, int64_t n) {
  arena_.reset();
  history_.insert(history_.end(), ids, ids + n);
  const autograd::OpContext ctx{&arena_, nullptr, run_precision(model_.store)};
  const Tensor logits = gpt_forward(ctx, model_, ids, n, cache_, Logits::LastRow);
  return logits.data;
}

}  // namespace nn
