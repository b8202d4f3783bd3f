// Checks on checkpoint contents shared by save (refuse to write a file we
// could not read back) and load (refuse an untrusted file): each returns ""
// when fine, else one sentence naming what is wrong.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoints/checkpoint.h"

namespace checkpoints {

bool known_tokenizer_type(const std::string& type);

// The tokenizer must have a known type and 1..vocab_size tokens (fewer than
// vocab_size is allowed: nanoGPT pads GPT-2's 50257 tokens to a vocab_size of
// 50304, and the extra embedding rows simply have no token), and every merge
// must name existing token ids.
std::string tokenizer_error(const data::TokenizerSpec& tokenizer, int64_t vocab_size);

// Flag names must be non-empty and unique.
std::string flags_error(const std::vector<Flag>& flags);

}  // namespace checkpoints
