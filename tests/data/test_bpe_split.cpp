// Our trained bpe with the gpt2 pre-split (Note [BPE pre-split]): GPT-2's
// words on valid UTF-8, invalid bytes alone, exact round trips on any bytes,
// distinct token bytes, and the split kept by tokenizer.json (files without
// it being byte-class, unknown values one DataError).
#include <catch2/catch.hpp>

#include <set>

#include "autograd/base/errors.h"
#include "autograd/base/rng.h"
#include "data/bpe_split.h"
#include "data/bpe_train.h"
#include "data/gpt2_split.h"
#include "data/tokenizer.h"
#include "data/tokenizer_json.h"
#include "support/files.h"

namespace {

using Chunks = std::vector<std::string>;

std::string shakespeare(size_t n) {
  static const std::string text = testing::read_bytes("data/tinyshakespeare.txt");
  return text.substr(0, n);
}

Chunks split_of(const std::string& split, std::string_view text) {
  Chunks out;
  data::bpe_split(split, text, [&](size_t b, size_t e) { out.emplace_back(text.substr(b, e - b)); });
  return out;
}

Chunks gpt2_words(std::string_view text) {
  Chunks out;
  data::gpt2_split(text, [&](size_t b, size_t e) { out.emplace_back(text.substr(b, e - b)); });
  return out;
}

// Text with everything GPT-2's regex treats specially, and non-ASCII.
const std::string kTricky =
    "First Citizen:\nWe're  done -- aren't we?  I'll say 'no'.\n\n\n    Indented   line\twith\ttabs; 12345 "
    "3.14!\nCaf\xc3\xa9 na\xc3\xafve \xe2\x80\x94 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x99\x82\n  \"q,\" x\n\nEnd.";

data::TokenizerSpec gpt2_split_bpe(size_t vocab) {
  return data::bpe_train(shakespeare(200000) + kTricky + kTricky, static_cast<int64_t>(vocab), nullptr, "gpt2");
}

}  // namespace

TEST_CASE("the gpt2 split is GPT-2's words on valid UTF-8", "[bpe_split]") {
  CHECK(split_of("gpt2", kTricky) == gpt2_words(kTricky));
  CHECK(split_of("gpt2", "a\n\nThe") == Chunks{"a", "\n", "\n", "The"});  // byte-class keeps "\n\n"
  CHECK(split_of("", "a\n\nThe") == Chunks{"a", "\n\n", "The"});
  CHECK(split_of("gpt2", "") == Chunks{});
}

TEST_CASE("the gpt2 split makes each invalid byte a chunk of its own", "[bpe_split]") {
  // Latin-1 é, a truncated euro sign, a lone continuation byte, a surrogate.
  CHECK(split_of("gpt2", "caf\xe9 ok") == Chunks{"caf", "\xe9", " ok"});
  CHECK(split_of("gpt2", "x\xe2\x82 y") == Chunks{"x", "\xe2", "\x82", " y"});
  CHECK(split_of("gpt2", "\x80\x80") == Chunks{"\x80", "\x80"});
  CHECK(split_of("gpt2", "a\xed\xa0\x80z") == Chunks{"a", "\xed", "\xa0", "\x80", "z"});
  CHECK(split_of("gpt2", std::string("\0 \xff\xc3\xa9", 5)) == Chunks{std::string(1, '\0'), " ", "\xff", "\xc3\xa9"});
}

TEST_CASE("a gpt2-split bpe round-trips any bytes and never merges across GPT-2 words", "[bpe_split]") {
  const data::TokenizerSpec spec = gpt2_split_bpe(600);
  CHECK(spec.split == "gpt2");
  const data::Tokenizer tok = data::make_tokenizer(spec);
  CHECK(tok.vocab_size() == 600);
  tg::Rng rng(99);
  for (int trial = 0; trial < 200; ++trial) {
    std::string bytes;
    const auto len = rng.below(300);
    for (uint64_t i = 0; i < len; ++i)
      bytes += rng.below(3) == 0 ? static_cast<char>(rng.below(256)) : " etaoin\n\0\xff\xc3\xa9"[rng.below(12)];
    INFO("trial " << trial);
    CHECK(tok.decode(tok.encode(bytes)) == bytes);
  }
  for (const std::string& s : {std::string(), std::string("\xc3"), std::string(4000, ' ') + "x", kTricky,
                               std::string("\xe2\x82 \xff\xfe\n\n  \xf0\x9f\x99"), std::string(3, '\0')})
    CHECK(tok.decode(tok.encode(s)) == s);
  // On valid text, the ids are those of encoding each GPT-2 word alone.
  std::vector<int32_t> by_word;
  for (const std::string& w : gpt2_words(kTricky)) {
    const auto ids = tok.encode(w);
    by_word.insert(by_word.end(), ids.begin(), ids.end());
  }
  CHECK(tok.encode(kTricky) == by_word);
  const std::string text = shakespeare(50000);
  const auto ids = tok.encode(text);
  CHECK(ids.size() < text.size() / 2);
  CHECK(tok.decode(ids) == text);
}

TEST_CASE("gpt2-split training makes no two tokens of the same bytes", "[bpe_split]") {
  const data::TokenizerSpec spec = data::bpe_train(shakespeare(std::string::npos), 4096, nullptr, "gpt2");
  CHECK(spec.tokens.size() == 4096);
  CHECK(std::set<std::string>(spec.tokens.begin(), spec.tokens.end()).size() == spec.tokens.size());
  // The byte-class split is trained exactly as before the choice existed.
  CHECK(data::bpe_train("ab ab ab cd", 259).split.empty());
}

TEST_CASE("tokenizer.json keeps the split; files without it are byte-class", "[bpe_split]") {
  testing::TempDir dir;
  const data::TokenizerSpec spec = gpt2_split_bpe(300);
  data::tokenizer_json_write(dir.file("tokenizer.json"), spec);
  CHECK(testing::read_bytes(dir.file("tokenizer.json")).find("\"split\":\"gpt2\"") != std::string::npos);
  const data::TokenizerSpec back = data::tokenizer_json_read(dir.file("tokenizer.json"));
  CHECK(back.split == "gpt2");
  CHECK(back.tokens == spec.tokens);
  CHECK(back.merges == spec.merges);
  CHECK(data::load_tokenizer_dir(dir.path()).encode(kTricky) == data::make_tokenizer(spec).encode(kTricky));

  // A byte-class spec writes no field (the file is as before), and a file
  // without it, or with "byte-class", reads as byte-class.
  const data::TokenizerSpec old = data::bpe_train("the cat the hat", 260);
  const std::string old_json = data::tokenizer_json_dump(old);
  CHECK(old_json.find("split") == std::string::npos);
  CHECK(data::tokenizer_json_parse(old_json, "old").split.empty());
  std::string explicit_json = old_json;
  explicit_json.insert(explicit_json.rfind('}'), ",\"split\":\"byte-class\"");
  CHECK(data::tokenizer_json_parse(explicit_json, "explicit").split.empty());

  const auto rejected = [&](const std::string& value, const char* why) {
    INFO(why);
    std::string json = old_json;
    json.insert(json.rfind('}'), ",\"split\":" + value);
    testing::write_bytes(dir.file("tokenizer.json"), json);
    CHECK_THROWS_WITH(data::load_tokenizer_dir(dir.path()), Catch::Contains("split"));
  };
  rejected("\"gpt4\"", "unknown split");
  rejected("7", "not a string");
  rejected("null", "null");
  // A split on a tokenizer that has no such choice is a bad spec.
  data::TokenizerSpec byte = data::byte_spec();
  byte.split = "gpt2";
  CHECK_THROWS_AS(data::make_tokenizer(byte), tg::DataError);
}
