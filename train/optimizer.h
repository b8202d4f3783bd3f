// One optimizer step over the flat buffers: global-norm clipping, AdamW with
// decoupled weight decay on 2-D parameters only, and gradient zeroing, fused
// into the kernels' single threaded pass.
#pragma once

#include <cstdint>

#include "nn/params.h"

namespace train {

struct AdamWConfig {
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;
  float grad_clip = 1.0f;  // 0 disables clipping
};

// Global L2 norm of all gradients (deterministic for any thread count).
double grad_norm(const nn::ParameterStore& store);

// Applies one step with learning rate lr as step number `step` (1-based, for
// bias correction) and leaves every gradient zero. `norm` is grad_norm(store),
// measured by the caller (who also logs it): if norm > clip the gradients are
// scaled by clip / (norm + 1e-6), as torch.nn.utils.clip_grad_norm_.
void adamw_step(nn::ParameterStore& store, const AdamWConfig& cfg, float lr, int64_t step,
                double norm);

}  // namespace train
