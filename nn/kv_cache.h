// KvCache: the keys and values a KV-cache forward keeps between calls, for
// every layer, and how many positions they hold (Note [KV-cache forward] in
// nn/gpt.cpp).
#pragma once

#include <cstdint>

#include "autograd/buffer.h"
#include "autograd/ops.h"
#include "nn/config.h"

namespace nn {

class KvCache {
 public:
  // Room for block_size positions in each of the config's layers.
  explicit KvCache(const GPTConfig& config);

  int64_t length() const { return length_; }  // positions 0…length-1 cached, in every layer
  int64_t capacity() const { return capacity_; }
  void clear() { length_ = 0; }

  // Layer l's rows, as attention's cached mode reads and appends them, with
  // the next position as its pos0.
  autograd::LayerCache layer(int64_t l);
  // After a forward over n more positions: every layer appended them.
  void advance(int64_t n);

 private:
  int64_t n_layer_, capacity_, C_;
  int64_t length_ = 0;
  autograd::FloatBuffer k_, v_;  // [n_layer, capacity, C] each
};

}  // namespace nn
