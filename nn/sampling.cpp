// Token sampling (see sampling.h).
#include "nn/sampling.h"

#include <algorithm>
#include <numeric>

#include "autograd/kernels/kernels.h"

namespace nn {

TokenSampler::TokenSampler(int64_t vocab_size)
    : probs_(static_cast<size_t>(vocab_size)), order_(static_cast<size_t>(vocab_size)) {}

int32_t TokenSampler::sample(const float* logits, const SamplingOptions& opt, tg::Rng& rng) {
  const int64_t V = static_cast<int64_t>(probs_.size());
  if (opt.temperature <= 0.0f) {
    return static_cast<int32_t>(std::max_element(logits, logits + V) - logits);
  }
  kernels::softmax_forward(probs_.data(), logits, opt.temperature, 1, V);
  // Candidates by falling probability (ties by id, so draws are reproducible).
  std::iota(order_.begin(), order_.end(), 0);
  int64_t keep = V;
  if (opt.top_k > 0 && opt.top_k < V) keep = opt.top_k;
  auto by_prob = [this](int32_t a, int32_t b) {
    return probs_[a] != probs_[b] ? probs_[a] > probs_[b] : a < b;
  };
  if (keep < V || opt.top_p < 1.0f) {
    std::partial_sort(order_.begin(), order_.begin() + keep, order_.end(), by_prob);
  }
  if (opt.top_p < 1.0f) {
    // Smallest prefix whose mass reaches top_p (at least one token), the
    // mass measured after renormalising over what top-k kept (Hugging
    // Face's and llama.cpp's order: top-k, renormalise, top-p).
    double kept = 0.0;
    for (int64_t i = 0; i < keep; ++i) kept += probs_[order_[i]];
    const double target = static_cast<double>(opt.top_p) * kept;
    double mass = 0.0;
    int64_t n = 0;
    while (n < keep) {
      mass += probs_[order_[n]];
      ++n;
      if (mass >= target) break;
    }
    keep = n;
  }
  double total = 0.0;
  for (int64_t i = 0; i < keep; ++i) total += probs_[order_[i]];
  double r = rng.uniform() * total;
  for (int64_t i = 0; i < keep; ++i) {
    r -= probs_[order_[i]];
    if (r < 0.0) return order_[i];
  }
  return order_[keep - 1];
}

}  // namespace nn
