// Softmax and cross-entropy kernels over rows of logits.
#include <cmath>

#include "autograd/kernels/kernels.h"

namespace kernels {

void crossentropy_forward(float* losses, float* probs, const float* logits,
                          const int32_t* targets, int64_t N, int64_t V) {
#pragma omp parallel for schedule(static) if (N * V > 16384)
  for (int64_t n = 0; n < N; ++n) {
    const float* x = logits + n * V;
    float* p = probs + n * V;
    const float target_logit = x[targets[n]];  // read before p may overwrite x
    float mx = x[0];
    for (int64_t j = 1; j < V; ++j) mx = x[j] > mx ? x[j] : mx;
    float sum = 0.0f;
    for (int64_t j = 0; j < V; ++j) {
      p[j] = std::exp(x[j] - mx);
      sum += p[j];
    }
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < V; ++j) p[j] *= inv;
    // -log softmax[target] = log Σ exp(x - max) + max - x[target]: no log(0).
    losses[n] = std::log(sum) + mx - target_logit;
  }
}

void crossentropy_backward(float* dlogits, const float* probs, const int32_t* targets,
                           float scale, int64_t N, int64_t V) {
  // ∂(-log p_target)/∂logit_j = p_j - [j == target]
  const bool over_probs = dlogits == probs;
#pragma omp parallel for schedule(static) if (N * V > 16384)
  for (int64_t n = 0; n < N; ++n) {
    const float* p = probs + n * V;
    float* d = dlogits + n * V;
    // Over the probabilities: 0 + x, the bits a zeroed dlogits would get.
    if (over_probs)
      for (int64_t j = 0; j < V; ++j) d[j] = 0.0f + scale * p[j];
    else
      for (int64_t j = 0; j < V; ++j) d[j] += scale * p[j];
    d[targets[n]] -= scale;
  }
}

void softmax_forward(float* probs, const float* logits, float temperature, int64_t N,
                     int64_t V) {
  const float inv_t = 1.0f / temperature;
  for (int64_t n = 0; n < N; ++n) {
    const float* x = logits + n * V;
    float* p = probs + n * V;
    float mx = x[0];
    for (int64_t j = 1; j < V; ++j) mx = x[j] > mx ? x[j] : mx;
    float sum = 0.0f;
    for (int64_t j = 0; j < V; ++j) {
      p[j] = std::exp((x[j] - mx) * inv_t);
      sum += p[j];
    }
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < V; ++j) p[j] *= inv;
  }
}

}  // namespace kernels
