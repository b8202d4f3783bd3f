// TokenizerSpec: everything needed to rebuild a tokenizer, as plain data.
// It is what prepare writes beside the token files and what a checkpoint's
// /tokenizer group holds, so eval, tokenize and sample need only one file.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace data {

// Note [BPE pre-split]: our trained bpe cuts text into chunks before merging,
// in one of two ways, chosen by prepare --bpe-split and stored with the spec:
//   byte-class  (split "", the default, and every file from before the
//               choice existed) Note [Byte-class chunks] in byte_split.h;
//   gpt2        GPT-2's regex (Note [GPT-2 regex] in gpt2_split.h) on each
//               run of valid UTF-8, each invalid byte a chunk of its own
//               (Note [GPT-2 split of any bytes] in bpe_split.h). llama.cpp
//               and Hugging Face have this pre-tokenizer, so a model with it
//               can be exported (Note [Byte-level vocabulary]).
// Files store the split only when it is not byte-class ("split": "gpt2"), so
// byte-class files are the same bytes as before; "byte-class" is accepted
// too and read as "".
constexpr const char* kSplitByteClass = "byte-class";
constexpr const char* kSplitGpt2 = "gpt2";

struct TokenizerSpec {
  std::string type;                              // "char", "byte", "bpe" or "gpt2"
  std::vector<std::string> tokens;               // id → the raw bytes it stands for
  std::vector<std::array<int32_t, 2>> merges;    // bpe, gpt2: (left id, right id) by rank
  std::string split = "";                        // bpe: "" (byte-class) or "gpt2" (Note [BPE pre-split])
};

// A split name from a file or flag as TokenizerSpec::split ("byte-class" → ""),
// or false when it is neither known name.
inline bool split_parse(const std::string& name, std::string* split) {
  if (name == kSplitByteClass) *split = "";
  else if (name == kSplitGpt2) *split = kSplitGpt2;
  else return false;
  return true;
}

}  // namespace data
