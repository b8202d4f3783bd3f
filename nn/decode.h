// Decoder: the sampler's driver of the KV-cache forward (Note [KV-cache
// forward] in nn/gpt.cpp). It feeds tokens through gpt_forward with its
// cache, a prompt in one pass and then one token a call, and keeps the
// context within block_size by a context shift. It computes nothing itself.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/arena.h"
#include "nn/gpt.h"
#include "nn/kv_cache.h"

namespace nn {

class Decoder {
 public:
  explicit Decoder(const GPT& model);

  // Feeds ids[n] at the next positions, in one forward pass where the cache
  // has room, and returns the logits [V] that predict the token after the
  // last (valid until the next call). When the cache is full (block_size
  // tokens) and a token comes, the oldest half is dropped and the newest
  // half re-encoded at positions 0… in one pass, as a cropped context would
  // be: the same contexts as feeding the tokens one at a time.
  const float* feed(const int32_t* ids, int64_t n);
  const float* feed(const std::vector<int32_t>& ids) { return feed(ids.data(), static_cast<int64_t>(ids.size())); }
  const float* step(int32_t token) { return feed(&token, 1); }
  void reset() { history_.clear(); cache_.clear(); }
  int64_t length() const { return cache_.length(); }

 private:
  // One pass over ids[n] at positions length()…; the last row's logits.
  const float* forward(const int32_t* ids, int64_t n);

  const GPT& model_;
  KvCache cache_;
  autograd::Arena arena_;         // one pass's activations, reset at each
  std::vector<int32_t> history_;  // tokens currently in the cache
};

}  // namespace nn
