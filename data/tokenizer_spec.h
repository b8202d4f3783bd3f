// TokenizerSpec: everything needed to rebuild a tokenizer, as plain data.
// It is what prepare writes beside the token files and what a checkpoint's
// /tokenizer group holds, so eval, tokenize and sample need only one file.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace data {

struct TokenizerSpec {
  std::string type;                              // "char", "byte", "bpe" or "gpt2"
  std::vector<std::string> tokens;               // id → the raw bytes it stands for
  std::vector<std::array<int32_t, 2>> merges;    // bpe, gpt2: (left id, right id) by rank
};

}  // namespace data
