// A tapegpt model as a GGUF file that llama.cpp (and ollama, LM Studio,
// node-llama-cpp) runs: each family as its row of the family table names it
// (gpt2, llama, arcee, qwen3, gptneox; Note [Export families]), the
// tokenizer as GGUF's tokenizer.ggml.* keys (Note [Byte-level vocabulary]).
//
// Note [GGUF export]: the tensors are the family table's GGUF names
// (gguf-py's tensor_mapping.py, llama.cpp's LLM_TENSOR_NAMES), PyTorch
// shapes reversed (Note [GGUF layout]); the hyper-parameters are
// ARCH.context_length, embedding_length, feed_forward_length, block_count,
// attention.head_count, and by the family's norm
//   LayerNorm: attention.layer_norm_epsilon 1e-5 (gptneox also
//          use_parallel_residual false: ours adds attention, then the MLP);
//   RMSNorm: attention.head_count_kv, attention.layer_norm_rms_epsilon 1e-5
//          (also the eps of qwen3's q/k norms, as ours), vocab_size;
// and with RoPE rope.dimension_count (the whole head) and rope.freq_base
// 10000. A tied head has no output tensor (llama.cpp reuses token_embd),
// except in gptneox, which requires one.
// RoPE pairs: ours rotates channel i with i + HS/2 of each head
// ("rotate_half", as Hugging Face's Llama); llama.cpp's `llama` and `arcee`
// ("norm" mode) rotate adjacent channels 2i and 2i+1 by the same angle
// p·10000^(-2i/HS). So the q and k rows (and biases) of each head are
// reordered there, row 2i + j of the GGUF head being our row i + j·HS/2
// (j = 0, 1), as convert_hf_to_gguf.py's permute does. q·k is unchanged by
// one permutation applied to both, and v and the output projection are
// untouched. `qwen3` and `gptneox` ("neox" mode) rotate rotate_half pairs,
// as ours: nothing is reordered.
// --dtype f16 stores 2-D tensors as float16 and keeps the 1-D ones (norms,
// biases) float32, as convert_hf_to_gguf.py does.
// A char or byte tokenizer has no end-of-text token; a LayerNorm model then
// gets one more row in token_embd and output (written untied) for a token
// that is never predicted (Note [Silent end-of-text] in gguf_export.cpp).
#pragma once

#include <string>

#include "checkpoints/export/export_family.h"
#include "checkpoints/export/export_tensors.h"
#include "checkpoints/export/gguf_write.h"
#include "data/tokenizer_spec.h"
#include "nn/config.h"
#include "nn/params.h"

namespace checkpoints {

// "" when the model and tokenizer can be written as GGUF exactly, else one
// sentence naming what cannot be.
std::string gguf_refusal(const nn::GPTConfig& config, const data::TokenizerSpec& tokenizer);

// Writes `path` atomically. The model must pass gguf_refusal. Returns a
// note for the user about the end-of-text token ("" when the tokenizer has
// one; Note [Silent end-of-text] in gguf_export.cpp). Throws tg::DataError
// naming the file on a write failure or a float16 overflow.
std::string gguf_export(const std::string& path, const ExportModel& model, GgufDtype dtype);

}  // namespace checkpoints
