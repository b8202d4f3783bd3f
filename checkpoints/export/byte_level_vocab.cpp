// Tokenizers as byte-level BPE vocabularies (Note [Byte-level vocabulary]).
#include "checkpoints/export/byte_level_vocab.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "autograd/base/check.h"
#include "data/gpt2_vocab.h"
#include "data/utf8.h"

namespace checkpoints {

namespace {

// GPT-2's merges plus the aliased pairs our encoder also merges, with the
// rank it gives each: the table data/make_tokenizer.cpp's build_gpt2 builds
// (Note [gpt-3-encoder comma keys]), as (rank, left, right), sorted.
std::vector<std::tuple<int32_t, int32_t, int32_t>> gpt2_merge_rules(const data::TokenizerSpec& spec) {
  std::unordered_map<std::string, int32_t> id_of;
  for (size_t id = 0; id < spec.tokens.size(); ++id) id_of.emplace(spec.tokens[id], static_cast<int32_t>(id));
  std::unordered_map<std::string, int32_t> rank_of_key;
  for (size_t r = 0; r < spec.merges.size(); ++r) {
    const auto [left, right] = spec.merges[r];
    rank_of_key[spec.tokens[left] + "," + spec.tokens[right]] = static_cast<int32_t>(r);  // later wins
  }
  std::map<std::pair<int32_t, int32_t>, int32_t> rules;
  for (const auto& [key, rank] : rank_of_key)
    for (size_t p = key.find(','); p != std::string::npos; p = key.find(',', p + 1)) {
      const auto l = id_of.find(key.substr(0, p)), r = id_of.find(key.substr(p + 1));
      if (l == id_of.end() || r == id_of.end() || !id_of.count(l->first + r->first)) continue;
      rules[{l->second, r->second}] = rank;
    }
  std::vector<std::tuple<int32_t, int32_t, int32_t>> out;
  for (const auto& [pair, rank] : rules) out.emplace_back(rank, pair.first, pair.second);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string byte_level_spelling(const std::string& bytes) {
  std::string out;
  for (unsigned char b : bytes) out += data::utf8_encode(data::gpt2_byte_to_unicode(b));
  return out;
}

std::string byte_level_refusal(const data::TokenizerSpec& spec) {
  if (spec.type == "char" || spec.type == "byte" || spec.type == "gpt2") return "";
  if (spec.type == "bpe" && spec.split.empty())
    return "the bpe tokenizer cuts text into byte-class chunks (Note [Byte-class chunks]) that no "
           "pre-tokenizer of llama.cpp or Hugging Face's GPT2Tokenizer reproduces, so they would tokenize some "
           "texts differently (e.g. two newlines before a word); prepare the data with tapegpt prepare "
           "--tokenizer bpe --bpe-split gpt2 (or the char, byte or gpt2 tokenizer) and train on it";
  if (spec.type == "bpe") {
    // Note [Distinct token bytes] in data/bpe_train.cpp.
    std::unordered_map<std::string, size_t> id_of;
    for (size_t id = 0; id < spec.tokens.size(); ++id) {
      const auto [it, fresh] = id_of.emplace(spec.tokens[id], id);
      if (!fresh)
        return "bpe tokens " + std::to_string(it->second) + " and " + std::to_string(id) +
               " stand for the same bytes, which a byte-level vocabulary cannot tell apart; prepare the data "
               "again with this tapegpt (prepare --tokenizer bpe --bpe-split gpt2 never makes such a pair)";
    }
    return "";
  }
  return "unknown tokenizer type '" + spec.type + "'";
}

ByteLevelVocab byte_level_vocab(const data::TokenizerSpec& spec) {
  TG_CHECK(byte_level_refusal(spec).empty());
  ByteLevelVocab v;
  for (const std::string& t : spec.tokens) v.tokens.push_back(byte_level_spelling(t));
  if (spec.type == "gpt2") {
    for (const auto& [rank, left, right] : gpt2_merge_rules(spec))
      v.merges.push_back(v.tokens[left] + " " + v.tokens[right]);
    for (size_t id = 0; id < spec.tokens.size(); ++id)
      if (spec.tokens[id] == "<|endoftext|>") v.end_of_text = static_cast<int32_t>(id);
  } else if (spec.type == "bpe") {
    for (const auto& [left, right] : spec.merges) v.merges.push_back(v.tokens[left] + " " + v.tokens[right]);
  } else if (spec.type == "char") {
    // Each multi-byte character's bytes joined left to right; characters
    // sharing a prefix share its merges, written once, and the symbols
    // they join that are no token become pieces, each once.
    std::set<std::string> symbols(v.tokens.begin(), v.tokens.end()), seen;
    const auto piece = [&](std::string s) {
      if (symbols.insert(s).second) v.pieces.push_back(std::move(s));
    };
    for (const std::string& t : spec.tokens)
      for (size_t k = 1; k < t.size(); ++k) {
        const std::string left = byte_level_spelling(t.substr(0, k)), right = byte_level_spelling(t.substr(k, 1));
        piece(left);
        piece(right);
        std::string m = left + " " + right;
        if (seen.insert(m).second) v.merges.push_back(std::move(m));
      }
  }
  return v;
}

}  // namespace checkpoints
