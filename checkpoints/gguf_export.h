// A tapegpt model as a GGUF file that llama.cpp (and ollama, LM Studio,
// node-llama-cpp) runs: the GPT-2 family as llama.cpp's `gpt2`, the Llama
// family as `llama`, LayerNorm + GELU + RoPE as `gptneox` (Note [Export
// families]), the tokenizer as GGUF's tokenizer.ggml.* keys (Note
// [Byte-level vocabulary]).
//
// Note [GGUF export]: tensors are read from the parameter table by name and
// written under llama.cpp's names (gguf-py's tensor_mapping.py), PyTorch
// shapes reversed (Note [GGUF layout]):
//   gpt2:  token_embd, position_embd, output_norm{,.bias}, output (untied
//          only: llama.cpp falls back to token_embd), and per block N
//          blk.N.attn_norm, attn_qkv (c_attn, rows q, k, v as ours),
//          attn_output, ffn_norm, ffn_up (c_fc), ffn_down (c_proj), each with
//          its bias; every bias is required there, so a model without biases
//          gets zeros. LayerNorm eps 1e-5 in gpt2.attention.layer_norm_epsilon.
//   llama: token_embd, output_norm, output (untied only), and per block
//          attn_norm, attn_q, attn_k, attn_v, attn_output, ffn_norm, ffn_gate
//          (c_fc's gate rows), ffn_up (its value rows), ffn_down, plus
//          biases when the model has them. RMSNorm eps 1e-5, rope base 10000
//          over the whole head.
//   gptneox: gpt2's tensors without position_embd and with output always
//          (token_embd's copy when tied); use_parallel_residual false, rope
//          over the whole head. Its RoPE ("neox" mode) rotates rotate_half
//          pairs, ours, so q and k are written as they are.
// RoPE pairs: ours rotates channel i with i + HS/2 of each head
// ("rotate_half", as Hugging Face's Llama); llama.cpp's `llama` rotates
// adjacent channels 2i and 2i+1 by the same angle p·10000^(-2i/HS). So the
// q and k rows (and biases) of each head are reordered, row 2i + j of the
// GGUF head being our row i + j·HS/2 (j = 0, 1), as convert_hf_to_gguf.py's
// permute does. q·k is unchanged by one permutation applied to both, and v
// and the output projection are untouched.
// --dtype f16 stores 2-D tensors as float16 and keeps the 1-D ones (norms,
// biases) float32, as convert_hf_to_gguf.py does.
// A char or byte tokenizer has no end-of-text token; a LayerNorm model then
// gets one more row in token_embd and output (written untied) for a token
// that is never predicted (Note [Silent end-of-text] in gguf_export.cpp).
#pragma once

#include <string>

#include "checkpoints/export_family.h"
#include "checkpoints/gguf_write.h"
#include "data/tokenizer_spec.h"
#include "nn/config.h"
#include "nn/params.h"

namespace checkpoints {

struct ExportModel {
  const nn::GPTConfig& config;
  const nn::ParameterStore& store;
  const float* position_table;  // the sinusoidal table [block_size, C], else null
  const data::TokenizerSpec& tokenizer;
  std::string name;             // general.name
};

// llama.cpp's name of a family's architecture: gpt2, llama, gptneox.
std::string gguf_architecture(ExportFamily family);

// "" when the model and tokenizer can be written as GGUF exactly, else one
// sentence naming what cannot be.
std::string gguf_refusal(const nn::GPTConfig& config, const data::TokenizerSpec& tokenizer);

// Writes `path` atomically. The model must pass gguf_refusal. Returns a
// note for the user about the end-of-text token ("" when the tokenizer has
// one; Note [Silent end-of-text] in gguf_export.cpp). Throws tg::DataError
// naming the file on a write failure or a float16 overflow.
std::string gguf_export(const std::string& path, const ExportModel& model, GgufDtype dtype);

}  // namespace checkpoints
