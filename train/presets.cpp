// Model presets (see presets.h).
#include "train/presets.h"

namespace train {

namespace {

nn::GPTConfig make(int64_t V, int64_t T, int64_t L, int64_t NH, int64_t C) {
  nn::GPTConfig c;
  c.vocab_size = V;
  c.block_size = T;
  c.n_layer = L;
  c.n_head = NH;
  c.n_embd = C;
  return c;
}

}  // namespace

nn::GPTConfig demo_config() { return make(65, 128, 4, 4, 192); }

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = {
      {"demo", demo_config()},
      {"gpt2-small", make(50257, 1024, 12, 12, 768)},
      {"gpt2-medium", make(50257, 1024, 24, 16, 1024)},
      {"gpt2-large", make(50257, 1024, 36, 20, 1280)},
      {"gpt2-xl", make(50257, 1024, 48, 25, 1600)},
      {"gpt3-175b", make(50257, 2048, 96, 96, 12288)},
  };
  return all;
}

const Preset* find_preset(const std::string& name) {
  for (const Preset& p : presets())
    if (name == p.name) return &p;
  return nullptr;
}

}  // namespace train
