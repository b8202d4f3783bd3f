// Tokenizer::Impl: the lookup tables a validated spec is turned into. Shared by
// tokenizer.cpp (encode/decode) and make_tokenizer.cpp (validation, building).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "data/bpe_merge.h"
#include "data/tokenizer.h"

namespace data {

enum class TokenizerKind { kChar, kByte, kBpe, kGpt2 };

struct Tokenizer::Impl {
  TokenizerSpec spec;
  TokenizerKind kind = TokenizerKind::kByte;
  std::unordered_map<uint32_t, int32_t> char_ids;  // char: code point -> id
  MergeTable merges;                               // bpe, gpt2
};

}  // namespace data
