// Content checks shared by save and load.
#include "checkpoints/validate.h"

#include <set>

namespace checkpoints {

bool known_tokenizer_type(const std::string& type) {
  return type == "char" || type == "byte" || type == "bpe" || type == "gpt2";
}

std::string tokenizer_error(const data::TokenizerSpec& t, int64_t vocab_size) {
  if (!known_tokenizer_type(t.type))
    return "tokenizer type '" + t.type + "' is not one of char, byte, bpe, gpt2";
  if (!t.split.empty() && (t.type != "bpe" || t.split != data::kSplitGpt2))
    return "a " + t.type + " tokenizer cannot have split '" + t.split + "' (only bpe has one: byte-class or gpt2)";
  const int64_t n = static_cast<int64_t>(t.tokens.size());
  if (n == 0) return "the tokenizer has no tokens";
  if (n > vocab_size)
    return "the tokenizer has " + std::to_string(n) + " tokens but the model's vocab_size is " +
           std::to_string(vocab_size) + ": the model cannot embed them all";
  for (size_t r = 0; r < t.merges.size(); ++r)
    for (int32_t id : t.merges[r])
      if (id < 0 || id >= n)
        return "tokenizer merge " + std::to_string(r) + " uses token id " + std::to_string(id) +
               ", outside [0, " + std::to_string(n) + ")";
  return "";
}

std::string flags_error(const std::vector<Flag>& flags) {
  std::set<std::string> seen;
  for (const Flag& f : flags) {
    if (f.name.empty()) return "a training flag has an empty name";
    if (!seen.insert(f.name).second) return "training flag " + f.name + " appears twice";
  }
  return "";
}

}  // namespace checkpoints
