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

// The demo model trained on Tiny Shakespeare (chars) by scripts/demo.sh;
// also the default shape of `tapegpt train`.
nn::GPTConfig demo_config();

const std::vector<Preset>& presets();
// Null if no preset has that name.
const Preset* find_preset(const std::string& name);

}  // namespace train
