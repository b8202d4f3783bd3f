// GeluKind: which GELU the kernels compute (kernels.h), on its own so that a
// model's config can name it without the kernels' declarations.
#pragma once

#include <cstdint>

namespace kernels {

// Tanh (GPT-2's, the default): gelu(x) = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
// Erf (PyTorch's nn.GELU(), nanoGPT's current model): gelu(x) = 0.5·x·(1 + erf(x/√2))
enum class GeluKind : uint8_t { Tanh, Erf };

}  // namespace kernels
