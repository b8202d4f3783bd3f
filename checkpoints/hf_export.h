// A tapegpt model in Hugging Face's layout: model.safetensors, config.json
// and the tokenizer files, a directory `transformers` loads with
// AutoModelForCausalLM / AutoTokenizer.from_pretrained(DIR).
//
// Note [Hugging Face export]: the GPT-2 family (Note [Export families]) is
// written as GPT2LMHeadModel, the inverse of `tapegpt import` (Note [Hugging
// Face GPT-2 layout]): names under "transformer.", the blocks' linear
// weights as Conv1D (in, out), i.e. ours transposed; biases a model lacks as
// zeros; the sinusoidal table as wpe; lm_head.weight only when untied (HF
// ties it to wte otherwise); n_positions and n_ctx both block_size;
// activation_function gelu_new (tanh) or gelu (erf). `tapegpt import` reads
// it back to the same float32 values, bit for bit.
// The Llama family is written as LlamaForCausalLM: model.embed_tokens,
// model.layers.N.{input_layernorm, self_attn.{q,k,v,o}_proj,
// post_attention_layernorm, mlp.{gate,up,down}_proj}, model.norm, lm_head,
// all (out, in) as ours. Hugging Face's Llama rotates rotate_half pairs with
// θ_i = rope_theta^(-2i/head_dim), as ours does, so q and k are not
// reordered (unlike GGUF's, Note [GGUF export]).
// Tokenizer: vocab.json and merges.txt (GPT2Tokenizer's files, Note
// [Byte-level vocabulary]) and tokenizer_config.json; a bpe tokenizer with
// the byte-class split is refused there as for GGUF. (GPT2Tokenizer splits
// with Python's regex module, whose \s is not JavaScript's: the two differ
// on a few rare space characters, e.g. U+0085 and U+FEFF, as for gpt2.)
#pragma once

#include <string>

#include "checkpoints/gguf_export.h"

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
