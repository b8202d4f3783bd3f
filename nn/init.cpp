// GPT-2 initialisation of a model's parameters (see gpt.h).
#include <algorithm>
#include <cmath>

#include "nn/gpt.h"

namespace nn {

void gpt_init(GPT& m, uint64_t seed) {
  const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(m.config.n_layer));
  const auto& table = m.store.table;
  // Each fixed-size chunk of each tensor has its own generator derived from
  // (seed, tensor, chunk), so chunks can be filled in parallel and the values
  // do not depend on the thread count.
  constexpr int64_t kChunk = 65536;
  for (size_t i = 0; i < table.size(); ++i) {
    const ParamInfo& p = table[i];
    float* data = m.store.params.data() + p.offset;
    const std::string& name = p.name;
    const bool is_bias = name.size() >= 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
    const bool is_norm = name.find("ln_") != std::string::npos;
    if (is_bias) {
      for (int64_t j = 0; j < p.numel; ++j) data[j] = 0.0f;
      continue;
    }
    if (is_norm) {
      for (int64_t j = 0; j < p.numel; ++j) data[j] = 1.0f;
      continue;
    }
    const bool residual_proj = name.find("c_proj.weight") != std::string::npos;
    const double std_dev = residual_proj ? residual_std : 0.02;
    const int64_t n_chunks = (p.numel + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < n_chunks; ++k) {
      uint64_t mix = seed ^ (0x51ed270b27a3ull * (i + 1));
      tg::Rng rng(tg::splitmix64(mix) + static_cast<uint64_t>(k));
      const int64_t j1 = std::min(p.numel, (k + 1) * kChunk);
      for (int64_t j = k * kChunk; j < j1; ++j) data[j] = static_cast<float>(rng.normal() * std_dev);
    }
  }
}

}  // namespace nn
