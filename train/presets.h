// Named model shapes (the demo's own config and the GPT-2/GPT-3 family) and
// named training recipes (`tapegpt train --preset NAME`).
#pragma once

#include <string>
#include <utility>
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

// A training recipe: values for `tapegpt train` flags, written as on the
// command line (a switch's value is ""). Flags given on the command line
// win over the recipe's; the recipe's win over the defaults.
struct TrainPreset {
  const char* name;
  const char* help;  // one line for --help
  std::vector<std::pair<const char*, const char*>> flags;  // flag without "--", value
};

const std::vector<TrainPreset>& train_presets();
// Null if no recipe has that name.
const TrainPreset* find_train_preset(const std::string& name);
// "'a' or 'b'" for an error message.
std::string train_preset_list();

}  // namespace train
