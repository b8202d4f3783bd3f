// Which precision `sample` generates in under --precision auto (Note
// [Sampling precision]).
#pragma once

#include <cstdint>

#include "nn/gpt.h"
#include "train/precision.h"

namespace train {

// Note [Sampling precision]
// Generation reads every weight once a token, so its speed is memory's and
// the one-row kernels', not the matmul rate that decides training's
// precision: at some shapes float32 generates faster than bf16 (M: 440-690
// tokens/s against 330-470 on a Zen 5), at others bf16 (its weights are
// half the bytes). So `sample --precision auto` measures both where oneDNN
// has a bf16 matmul: a few one-token passes of `model` in each, after one
// that pays the first call's costs, and generates in the faster. The
// checkpoint's own precision is kept unless the other is at least
// kDecodeMinSpeedup× faster (a near tie would make the choice, and with it
// the sampled text's bits, differ between runs), and for short generations
// (under kDecodeMeasureFrom tokens: measuring would cost more than it
// saves). `eval` keeps the checkpoint's precision, so its loss matches the
// training log's; `--precision fp32|bf16` fixes it (and the text's bits).
constexpr double kDecodeMinSpeedup = 1.1;
constexpr int64_t kDecodeMeasureFrom = 32;

// Leaves `model` in the chosen precision; the reason gives both timings.
PrecisionChoice choose_decode_precision(nn::GPT& model, Precision trained, int64_t new_tokens);

}  // namespace train
