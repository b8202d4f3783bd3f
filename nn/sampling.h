// Choosing the next token from logits: temperature, top-k and top-p
// (nucleus) filtering, then a draw from an explicit generator. In order:
// p = softmax(logits / temperature); keep the top_k most likely; renormalise;
// keep the smallest prefix (by falling probability, ties by id) whose mass
// reaches top_p; renormalise; draw. Temperature 0 is greedy (argmax).
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/base/rng.h"

namespace nn {

struct SamplingOptions {
  float temperature = 1.0f;  // 0 = greedy (argmax)
  int64_t top_k = 0;         // 0 = no limit
  float top_p = 1.0f;        // 1 = no limit
};

class TokenSampler {
 public:
  explicit TokenSampler(int64_t vocab_size);
  // Picks a token id from logits[V]; buffers are reused across calls.
  int32_t sample(const float* logits, const SamplingOptions& opt, tg::Rng& rng);

 private:
  std::vector<float> probs_;
  std::vector<int32_t> order_;
};

}  // namespace nn
