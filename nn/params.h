// The parameter table: every GPT parameter as a named view into four flat
// buffers (parameters, gradients, AdamW's two moments). Names and shapes are
// exactly nanoGPT's state_dict keys, so checkpoints interoperate with PyTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/buffer.h"
#include "nn/config.h"

namespace nn {

struct ParamInfo {
  std::string name;              // e.g. "transformer.h.0.attn.c_attn.weight"
  std::vector<int64_t> shape;    // PyTorch shape, e.g. {3C, C}
  int64_t offset = 0;            // first element in each flat buffer
  int64_t numel = 0;
  bool decay = false;            // AdamW weight decay: all 2-D tensors
};

// Decayed (2-D) parameters come first in the flat buffers, so the optimizer
// runs as two contiguous passes: [0, n_decay) with decay, the rest without.
struct ParameterStore {
  std::vector<ParamInfo> table;  // in nanoGPT's state_dict order
  int64_t total = 0;
  int64_t n_decay = 0;
  autograd::FloatBuffer params, grads, m, v;

  const ParamInfo* find(const std::string& name) const;  // null if absent
  float* param(const std::string& name);                 // aborts if absent
  float* grad(const std::string& name);
};

// Builds the table for a config and allocates the four zeroed buffers, or
// only `params` when !training (a converter needs no gradients or moments,
// and for GPT-2 XL each buffer is 6 GB).
ParameterStore make_parameter_store(const GPTConfig& config, bool training = true);

}  // namespace nn
