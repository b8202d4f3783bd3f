// Model presets (see presets.h).
#include "train/presets.h"

namespace train {

nn::GPTConfig make_config(int64_t V, int64_t T, int64_t L, int64_t NH, int64_t C) {
  nn::GPTConfig c;
  c.vocab_size = V;
  c.block_size = T;
  c.n_layer = L;
  c.n_head = NH;
  c.n_embd = C;
  return c;
}

nn::GPTConfig demo_config() { return make_config(65, 128, 4, 4, 192); }

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = {
      {"demo", demo_config()},
      {"gpt2-small", make_config(50257, 1024, 12, 12, 768)},
      {"gpt2-medium", make_config(50257, 1024, 24, 16, 1024)},
      {"gpt2-large", make_config(50257, 1024, 36, 20, 1280)},
      {"gpt2-xl", make_config(50257, 1024, 48, 25, 1600)},
      {"gpt3-175b", make_config(50257, 2048, 96, 96, 12288)},
  };
  return all;
}

const Preset* find_preset(const std::string& name) {
  for (const Preset& p : presets())
    if (name == p.name) return &p;
  return nullptr;
}

}  // namespace train
