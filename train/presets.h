// Named model shapes: the demo's own config and the GPT-2/GPT-3 family.
#pragma once

#include <string>
#include <vector>

#include "nn/config.h"

namespace train {

struct Preset {
  const char* name;
  nn::GPTConfig config;
};

// A config from its five sizes (bias, tied, learned positions: GPT-2's).
nn::GPTConfig make_config(int64_t vocab_size, int64_t block_size, int64_t n_layer, int64_t n_head,
                          int64_t n_embd);

// The demo model trained on Tiny Shakespeare (chars) by scripts/demo.sh;
// also the default shape of `tapegpt train`.
nn::GPTConfig demo_config();

const std::vector<Preset>& presets();
// Null if no preset has that name.
const Preset* find_preset(const std::string& name);

}  // namespace train
