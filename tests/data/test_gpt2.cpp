// GPT-2 tokenizer: parity with the reference encoder's ids (fixtures from
// scripts/make_gpt2_fixtures.sh), exact decode, rebuild from its spec alone.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "autograd/base/errors.h"
#include "data/gpt2_vocab.h"
#include "data/tokenizer.h"
#include "data/tokenizer_json.h"
#include "support/files.h"

namespace {

struct Case {
  std::string text;
  std::vector<int32_t> ids;
};

std::vector<Case> load_cases() {
  const auto j = nlohmann::json::parse(testing::read_bytes("tests/data/fixtures/gpt2_cases.json"));
  std::vector<Case> cases;
  for (const auto& c : j.at("cases")) cases.push_back({c.at("text").get<std::string>(), c.at("ids").get<std::vector<int32_t>>()});
  return cases;
}

const data::Tokenizer& gpt2() {
  static const data::Tokenizer tok = data::make_tokenizer(data::gpt2_spec());
  return tok;
}

}  // namespace

TEST_CASE("gpt2 spec has GPT-2's shape", "[gpt2]") {
  const auto& spec = data::gpt2_spec();
  CHECK(spec.type == "gpt2");
  CHECK(spec.tokens.size() == 50257);
  CHECK(spec.merges.size() == 50000);
  CHECK(spec.tokens[50256] == "<|endoftext|>");
  CHECK(spec.tokens[220] == " ");   // "Ġ" is the space byte
  CHECK(spec.tokens[198] == "\n");  // "Ċ"
  CHECK(data::gpt2_byte_to_unicode(' ') == 0x120);
  CHECK(data::gpt2_byte_to_unicode('A') == 'A');
}

TEST_CASE("gpt2 ids equal the reference encoder's on every fixture", "[gpt2]") {
  const auto cases = load_cases();
  REQUIRE(cases.size() >= 50);
  for (const Case& c : cases) {
    INFO("text: " << c.text);
    CHECK(gpt2().encode(c.text) == c.ids);
    CHECK(gpt2().decode(c.ids) == c.text);
  }
}

TEST_CASE("gpt2 rebuilt from tokenizer.json gives the same ids", "[gpt2]") {
  const data::TokenizerSpec spec =
      data::tokenizer_json_parse(data::tokenizer_json_dump(data::gpt2_spec()), "memory");
  const data::Tokenizer rebuilt = data::make_tokenizer(spec);
  for (const Case& c : load_cases()) {
    INFO("text: " << c.text);
    CHECK(rebuilt.encode(c.text) == c.ids);
  }
}

TEST_CASE("gpt2 on Tiny Shakespeare matches nanoGPT's token counts", "[gpt2]") {
  const std::string text = testing::read_bytes("data/tinyshakespeare.txt");
  const size_t cut = static_cast<size_t>(text.size() * 0.9);
  const auto train = gpt2().encode(std::string_view(text).substr(0, cut));
  const auto val = gpt2().encode(std::string_view(text).substr(cut));
  CHECK(train.size() == 301966);  // nanoGPT data/shakespeare/prepare.py
  CHECK(val.size() == 36059);
  CHECK(gpt2().decode(train) + gpt2().decode(val) == text);
}

TEST_CASE("gpt2 rejects invalid UTF-8 and out-of-range ids", "[gpt2]") {
  CHECK_THROWS_AS(gpt2().encode("ok \xff bad"), tg::DataError);
  CHECK_THROWS_AS(gpt2().encode("\xed\xa0\x80"), tg::DataError);  // a UTF-16 surrogate
  CHECK_THROWS_AS(gpt2().encode("\xc0\xaf"), tg::DataError);      // overlong '/'
  CHECK_THROWS_WITH(gpt2().decode(std::vector<int32_t>{15496, 50257}), Catch::Contains("50257"));
  CHECK_THROWS_AS(gpt2().decode(std::vector<int32_t>{-1}), tg::DataError);
}
