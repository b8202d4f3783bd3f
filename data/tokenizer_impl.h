// Tokenizer::Impl: the lookup tables a validated spec is turned into. Shared by
// tokenizer.cpp (encode/decode) and make_tokenizer.cpp (validation, building).
#pragma once

#include <mutex>
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

  // Encoded words by their bytes: text repeats words, so BPE runs once per
  // distinct word. Bounded; cleared when full.
  mutable std::mutex cache_mutex;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache;
};

}  // namespace data
