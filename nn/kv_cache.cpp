// KvCache (see kv_cache.h).
#include "nn/kv_cache.h"

#include "autograd/base/check.h"

namespace nn {

KvCache::KvCache(const GPTConfig& config)
    : n_layer_(config.n_layer), capacity_(config.block_size), C_(config.n_embd) {
  k_.resize(n_layer_ * capacity_ * C_);
  v_.resize(n_layer_ * capacity_ * C_);
}

autograd::LayerCache KvCache::layer(int64_t l) {
  TG_CHECK(l >= 0 && l < n_layer_);
  const int64_t offset = l * capacity_ * C_;
  return autograd::LayerCache{k_.data() + offset, v_.data() + offset, capacity_, length_};
}

void KvCache::advance(int64_t n) {
  TG_CHECK(n >= 0 && length_ + n <= capacity_);
  length_ += n;
}

}  // namespace nn
