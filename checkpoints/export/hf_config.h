// The text files of a Hugging Face directory: config.json for a family's
// row (Note [Hugging Face export]) and GPT2Tokenizer's vocab.json,
// merges.txt and tokenizer_config.json (Note [Byte-level vocabulary]).
#pragma once

#include <string>

#include "checkpoints/export/byte_level_vocab.h"
#include "checkpoints/export/export_family.h"
#include "checkpoints/export/export_tensors.h"

namespace checkpoints {

// config.json: GPT2Config's keys for the GPT-2 family, LlamaConfig's (as
// Arcee's and Qwen3's configs name them too) for the others.
std::string hf_config_json(const ExportModel& model, const Family& family, int32_t end_of_text);

std::string hf_vocab_json(const ByteLevelVocab& vocab);
std::string hf_merges_txt(const ByteLevelVocab& vocab);
std::string hf_tokenizer_config(const ExportModel& model, const ByteLevelVocab& vocab);

}  // namespace checkpoints
