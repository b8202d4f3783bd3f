// GPT-2 initialisation of a model's parameters (see gpt.h).
#include <algorithm>
#include <cmath>

#include "autograd/base/check.h"
#include "nn/gpt.h"

namespace nn {

namespace {

enum class Init { Zeros, Ones, Normal, ResidualNormal };

// GPT-2's rule for each role (see gpt_init in gpt.h).
Init init_of(ParamRole role) {
  using R = ParamRole;
  switch (role) {
    case R::AttnNormBias: case R::QkvBias: case R::AttnProjBias: case R::MlpNormBias:
    case R::MlpUpBias: case R::MlpDownBias: case R::FinalNormBias:
      return Init::Zeros;
    case R::AttnNormWeight: case R::MlpNormWeight: case R::FinalNormWeight:
      return Init::Ones;
    case R::AttnProjWeight: case R::MlpDownWeight:
      return Init::ResidualNormal;
    case R::TokenEmbedding: case R::PositionEmbedding: case R::QkvWeight: case R::MlpUpWeight:
    case R::OutputHead:
      return Init::Normal;
  }
  TG_CHECK(false && "unknown role");
  return Init::Normal;
}

}  // namespace

void gpt_init(GPT& m, uint64_t seed, const InitOptions& options) {
  const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(m.config.n_layer));
  const auto& table = m.store.table;
  // Each fixed-size chunk of each tensor has its own generator derived from
  // (seed, tensor, chunk), so chunks can be filled in parallel and the values
  // do not depend on the thread count.
  constexpr int64_t kChunk = 65536;
  for (size_t i = 0; i < table.size(); ++i) {
    const ParamInfo& p = table[i];
    float* data = m.store.values.floats() + p.offset;
    Init init = init_of(p.role);
    if (init == Init::ResidualNormal && options.zero_residual_proj) init = Init::Zeros;
    if (init == Init::Zeros || init == Init::Ones) {
      std::fill(data, data + p.numel, init == Init::Ones ? 1.0f : 0.0f);
      continue;
    }
    const double std_dev = init == Init::ResidualNormal ? residual_std : 0.02;
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
