// Test support: the tiny GPT the tests build. V=11, T=8, L=2, NH=2, C=16:
// every kind of tensor, and a step in milliseconds.
#pragma once

#include "nn/config.h"

namespace testing {

inline nn::GPTConfig tiny_config() {
  nn::GPTConfig c;
  c.vocab_size = 11;
  c.block_size = 8;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 16;
  return c;
}

}  // namespace testing
