// Gradient norm, clipping factor and AdamW over the parameter store (see
// optimizer.h).
#include "train/optimizer.h"

#include <cmath>

#include "autograd/kernels/kernels.h"

namespace train {

double grad_norm(const nn::ParameterStore& store) {
  return std::sqrt(kernels::sum_squares(store.grads.data(), store.total));
}

float clip_factor(const AdamWConfig& cfg, double norm) {
  if (cfg.grad_clip > 0.0f && norm > cfg.grad_clip) return static_cast<float>(cfg.grad_clip / (norm + 1e-6));
  return 1.0f;
}

void adamw_update(nn::ParameterStore& s, const AdamWConfig& cfg, float lr, int64_t step,
                  float grad_scale) {
  // The table puts every decayed (2-D) tensor in [0, n_decay): two passes.
  kernels::adamw_update(s.params.data(), s.m.data(), s.v.data(), s.grads.data(), s.n_decay, lr,
                        cfg.beta1, cfg.beta2, cfg.eps, cfg.weight_decay, step, grad_scale);
  const int64_t rest = s.total - s.n_decay;
  kernels::adamw_update(s.params.data() + s.n_decay, s.m.data() + s.n_decay,
                        s.v.data() + s.n_decay, s.grads.data() + s.n_decay, rest, lr, cfg.beta1,
                        cfg.beta2, cfg.eps, 0.0f, step, grad_scale);
}

}  // namespace train
