// The optimizer's three parts, applied by train_step.cpp in this order:
// the global gradient norm, the clipping factor it decides, and one AdamW
// update (decoupled weight decay on 2-D parameters only) that also leaves
// every gradient zero.
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

// What clipping scales every gradient by: grad_clip / (norm + 1e-6) when the
// norm exceeds grad_clip (as torch.nn.utils.clip_grad_norm_), else 1.
float clip_factor(const AdamWConfig& cfg, double norm);

// One AdamW step with learning rate lr as step number `step` (1-based, for
// bias correction), reading each gradient times `grad_scale`. Note [Fused
// optimizer pass]: the kernel writes 0 into each gradient right after
// reading it, so clipping's scale, the update and the zeroing the next
// backward needs (it adds into the gradients) are one sweep over memory.
void adamw_update(nn::ParameterStore& store, const AdamWConfig& cfg, float lr, int64_t step,
                  float grad_scale);

}  // namespace train
