// A tiny GPT (on support/tiny_config.h's config) and batch shared by the nn tests.
#pragma once

#include <vector>

#include "autograd/ops.h"
#include "nn/gpt.h"
#include "support/tiny_config.h"

namespace testing {

// Initialised with a larger spread than GPT-2's 0.02 so that every parameter
// has a clearly non-zero gradient for finite differences to measure.
inline nn::GPT tiny_model(const nn::GPTConfig& c, uint64_t seed = 7, float spread = 10.0f) {
  nn::GPT m = nn::gpt_create(c);
  nn::gpt_init(m, seed);
  for (const nn::ParamInfo& p : m.store.table) {
    float* d = m.store.values.floats() + p.offset;
    tg::Rng rng(seed + static_cast<uint64_t>(p.offset));
    for (int64_t i = 0; i < p.numel; ++i) {
      // LayerNorm weights stay near 1, everything else gets spread out.
      d[i] = (p.shape.size() == 1 && d[i] == 1.0f) ? 1.0f + 0.2f * float(rng.normal())
                                                   : d[i] * spread + 0.05f * float(rng.normal());
    }
  }
  return m;
}

struct Batch {
  int64_t B, T;
  std::vector<int32_t> inputs, targets;
};

inline Batch tiny_batch(int64_t B, int64_t T, int64_t V, uint64_t seed = 3) {
  tg::Rng rng(seed);
  Batch b{B, T, {}, {}};
  for (int64_t i = 0; i < B * T; ++i) {
    b.inputs.push_back(static_cast<int32_t>(rng.below(V)));
    b.targets.push_back(static_cast<int32_t>(rng.below(V)));
  }
  return b;
}

// Mean cross-entropy of the model on a batch, accumulated in double; taped
// when `tape` is given (the loss tensor is returned through `loss_out`).
inline double model_loss(const nn::GPT& m, const Batch& b, autograd::Arena& arena,
                         autograd::Tape* tape, autograd::Tensor* loss_out = nullptr) {
  autograd::OpContext ctx{&arena, tape};
  autograd::Tensor logits = nn::gpt_forward(ctx, m, b.inputs.data(), b.B, b.T);
  std::vector<float> losses(static_cast<size_t>(b.B * b.T));
  autograd::Tensor loss = autograd::cross_entropy(ctx, std::move(logits), b.targets.data(), losses.data());
  if (loss_out) *loss_out = loss;
  double s = 0.0;
  for (float l : losses) s += l;
  return s / static_cast<double>(losses.size());
}

}  // namespace testing
