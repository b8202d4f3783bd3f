// char and byte tokenizers: vocabularies, round trips, and the errors a
// sampling prompt can hit (unknown character, invalid UTF-8).
#include <catch2/catch.hpp>

#include "autograd/base/errors.h"
#include "autograd/base/rng.h"
#include "data/tokenizer.h"
#include "support/files.h"

TEST_CASE("char vocabulary is the sorted distinct code points", "[char]") {
  const data::TokenizerSpec spec = data::char_spec_from_text("hello wörld\n");
  REQUIRE(spec.type == "char");
  const std::vector<std::string> expected = {"\n", " ", "d", "e", "h", "l", "o", "r", "w", "\xc3\xb6"};
  CHECK(spec.tokens == expected);
  CHECK(spec.merges.empty());
}

TEST_CASE("char tokenizer on Tiny Shakespeare has nanoGPT's 65 tokens", "[char]") {
  const std::string text = testing::read_bytes("data/tinyshakespeare.txt");
  const data::Tokenizer tok = data::make_tokenizer(data::char_spec_from_text(text));
  CHECK(tok.vocab_size() == 65);
  CHECK(tok.token_bytes(0) == "\n");
  CHECK(tok.token_bytes(1) == " ");
  const auto ids = tok.encode(text);
  CHECK(ids.size() == text.size());  // all ASCII
  CHECK(tok.decode(ids) == text);
  CHECK(tok.encode("hii there") == std::vector<int32_t>{46, 47, 47, 1, 58, 46, 43, 56, 43});  // nanoGPT's example
}

TEST_CASE("char tokenizer names an unknown character and its position", "[char]") {
  const data::Tokenizer tok = data::make_tokenizer(data::char_spec_from_text("abc é"));
  CHECK(tok.decode(tok.encode("é abc")) == "é abc");
  CHECK_THROWS_AS(tok.encode("abz"), tg::DataError);
  CHECK_THROWS_WITH(tok.encode("abz"), Catch::Contains("'z'") && Catch::Contains("U+007A") && Catch::Contains("byte 2"));
  CHECK_THROWS_WITH(tok.encode("ab\n"), Catch::Contains("U+000A") && Catch::Contains("byte 2"));
  CHECK_THROWS_WITH(tok.encode("é😀"), Catch::Contains("U+1F600") && Catch::Contains("byte 2"));
}

TEST_CASE("char tokenizer rejects invalid UTF-8", "[char]") {
  CHECK_THROWS_AS(data::char_spec_from_text("ab\x80"), tg::DataError);
  const data::Tokenizer tok = data::make_tokenizer(data::char_spec_from_text("abc"));
  CHECK_THROWS_WITH(tok.encode("a\xc3"), Catch::Contains("byte 1") && Catch::Contains("UTF-8"));
  CHECK_THROWS_AS(tok.decode(std::vector<int32_t>{3}), tg::DataError);
  CHECK_THROWS_AS(tok.token_bytes(-1), tg::DataError);
}

TEST_CASE("byte tokenizer round-trips any bytes", "[byte]") {
  const data::Tokenizer tok = data::make_tokenizer(data::byte_spec());
  CHECK(tok.vocab_size() == 256);
  tg::Rng rng(7);
  std::string bytes;
  for (int i = 0; i < 5000; ++i) bytes += static_cast<char>(rng.below(256));
  const auto ids = tok.encode(bytes);
  REQUIRE(ids.size() == bytes.size());
  CHECK(ids[0] == static_cast<unsigned char>(bytes[0]));
  CHECK(tok.decode(ids) == bytes);
  CHECK(tok.encode("").empty());
}
