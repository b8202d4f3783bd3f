// The naive causal multi-head self-attention pair, which stores every T×T
// probability map: the oracle the blockwise kernels (attention_flash.h) are
// tested against and the baseline `tapegpt bench --naive-attention` times.
// Not part of the production kernels library (kernels.h): it is the library
// tapegpt_kernels_naive, linked only by tests and the benchmark driver.
// Same Note [Kernel conventions] as kernels.h.
#pragma once

#include <cstdint>

namespace kernels {

// qkv[B,T,3C] holds q, k, v side by side; head h owns channels h·HS…(h+1)·HS-1
// of each. For every (b, h): scores = q·kᵀ/√HS with future positions set to
// -∞ before a row-wise softmax, so att[b,h,t,:] sums to 1 and is exactly 0
// above the diagonal; out[b,t,h·HS…] = att·v.
// att[B,NH,T,T] keeps the probabilities for backward (before dropout).
// dropout_p > 0 drops probabilities as Note [Attention dropout] in
// attention_flash.h (the same mask as the blockwise kernel).
void attention_naive_forward(float* out, float* att, const float* qkv, int64_t B, int64_t T,
                             int64_t C, int64_t NH, float dropout_p = 0.0f, uint64_t seed = 0);
// Softmax backward: dscores = att ⊙ (datt - Σ_j att·datt), then
// dq += dscores·k/√HS, dk += dscoresᵀ·q/√HS, dv += attᵀ·dout.
// scratch holds B*NH*T*T floats.
void attention_naive_backward(float* dqkv, float* scratch, const float* dout, const float* qkv,
                              const float* att, int64_t B, int64_t T, int64_t C, int64_t NH,
                              float dropout_p = 0.0f, uint64_t seed = 0);

}  // namespace kernels
