// Hugging Face GPT-2 (model.safetensors + config.json) → tapegpt's config and
// parameter table, as nanoGPT's GPT.from_pretrained does it.
//
// Note [Hugging Face GPT-2 layout]: HF's GPT-2 stores each linear layer as a
// Conv1D whose weight is (in, out) and computes x @ W + b; ours (and nanoGPT's
// nn.Linear) is (out, in), so c_attn, attn.c_proj, c_fc and mlp.c_proj are
// transposed on import. wte, wpe, LayerNorms and biases copy as they are.
// Names are "h.0.attn.c_attn.weight" (GPT2Model, as in the `gpt2` repository)
// or the same under "transformer." (GPT2LMHeadModel); h.N.attn.bias and
// h.N.attn.masked_bias are the causal-mask buffers, not weights, and are
// skipped. lm_head.weight, when present, is wte (tied) unless config.json
// says tie_word_embeddings: false.
#pragma once

#include <string>
#include <vector>

#include "checkpoints/safetensors.h"
#include "nn/config.h"
#include "nn/params.h"

namespace checkpoints {

struct HfGpt2 {
  nn::GPTConfig config;          // learned positions, biases, dropout 0
  nn::ParameterStore store;      // parameters only (no gradients or moments)
  std::vector<std::string> notes;  // lines for the user, e.g. what was inferred
};

// Checks config.json (text, or empty when the user gave none: the shape is
// then inferred from the tensors and a note says so) against the tensors,
// then converts every weight to float32 in our layout. Throws tg::DataError
// (one line: the tensor or field and what is wrong) on a missing, unknown,
// misshapen, non-float or non-finite tensor, or a config tapegpt cannot run.
HfGpt2 hf_gpt2_import(const Safetensors& file, const std::string& config_json);

}  // namespace checkpoints
