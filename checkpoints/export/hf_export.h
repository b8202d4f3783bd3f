// A tapegpt model in Hugging Face's layout: model.safetensors, config.json
// and the tokenizer files, a directory `transformers` loads with
// AutoModelForCausalLM / AutoTokenizer.from_pretrained(DIR).
//
// Note [Hugging Face export]: each family as its row of the family table
// names it (Note [Export families]). The GPT-2 family is GPT2LMHeadModel,
// the inverse of `tapegpt import` (Note [Hugging Face GPT-2 layout]): our
// names, the blocks' linear weights as Conv1D (in, out), i.e. ours
// transposed; biases a model lacks as zeros; the sinusoidal table as wpe;
// lm_head.weight only when untied (HF ties it to wte otherwise); n_positions
// and n_ctx both block_size; activation_function gelu_new (tanh) or gelu
// (erf). `tapegpt import` reads it back to the same float32 values, bit for
// bit. Llama, Arcee and Qwen3 are LlamaForCausalLM, ArceeForCausalLM and
// Qwen3ForCausalLM: model.embed_tokens, model.layers.N.{input_layernorm,
// self_attn.{q,k,v,o}_proj, post_attention_layernorm, mlp.{gate,up,down}_proj
// (Arcee: no gate_proj; hidden_act relu2)}, Qwen3's self_attn.{q,k}_norm
// (ones), model.norm, lm_head, all (out, in) as ours. Their RoPE rotates
// rotate_half pairs with θ_i = rope_theta^(-2i/head_dim), as ours does, so
// q and k are not reordered (unlike GGUF's, Note [GGUF export]).
// Tokenizer: vocab.json and merges.txt (GPT2Tokenizer's files, Note
// [Byte-level vocabulary]) and tokenizer_config.json; a bpe tokenizer with
// the byte-class split is refused there as for GGUF. (GPT2Tokenizer splits
// with Python's regex module, whose \s is not JavaScript's: the two differ
// on a few rare space characters, e.g. U+0085 and U+FEFF, as for gpt2.)
#pragma once

#include <string>

#include <vector>

#include "checkpoints/export/export_tensors.h"

namespace checkpoints {

// "" when the model and tokenizer can be written exactly, else one sentence.
std::string hf_refusal(const nn::GPTConfig& config, const data::TokenizerSpec& tokenizer);

// The files hf_export writes into a directory, for existence checks.
const std::vector<std::string>& hf_export_files();

// Writes the files into the directory `dir` (created if absent): each one
// finished (flushed, fsynced) before any is renamed into place, so a failure
// leaves the old files. Throws tg::DataError naming the file on failure.
void hf_export(const std::string& dir, const ExportModel& model);

}  // namespace checkpoints
