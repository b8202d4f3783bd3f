// Decoder: untaped, one-token-at-a-time inference with a KV cache, so each
// new token costs work proportional to the context instead of a full re-run.
// It calls the same kernels as training (linear, layernorm, gelu, …) with
// N = 1 row, plus attention_decode for one query against the cache.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/buffer.h"
#include "nn/gpt.h"

namespace nn {

class Decoder {
 public:
  explicit Decoder(const GPT& model);

  // Feeds one token at the next position and returns the logits [V] that
  // predict the token after it (valid until the next call). When the cache
  // is full (block_size tokens) the oldest half is dropped and the newest
  // half re-encoded at positions 0…, as a cropped context would be.
  const float* step(int32_t token);
  void reset() { history_.clear(); len_ = 0; }
  int64_t length() const { return len_; }

 private:
  const float* forward_position(int32_t token, int64_t pos);

  const GPT& model_;
  int64_t len_ = 0;
  std::vector<int32_t> history_;                 // tokens currently in the cache
  autograd::FloatBuffer k_cache_, v_cache_;      // [n_layer, block_size, C]
  autograd::FloatBuffer x_, h_, qkv_, att_, fc_, logits_, scratch_, mean_rstd_;
  autograd::Bf16Buffer row_bf16_;  // a linear's input row, rounded (bf16 runs)
};

}  // namespace nn
