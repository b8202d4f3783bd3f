// Our byte-level BPE: exact round trips on arbitrary bytes, deterministic
// training, the merge order on a tiny corpus, and chunking.
#include <catch2/catch.hpp>

#include <chrono>

#include "autograd/base/errors.h"
#include "autograd/base/rng.h"
#include "data/bpe_train.h"
#include "data/byte_split.h"
#include "data/tokenizer.h"
#include "data/tokenizer_json.h"
#include "support/files.h"

namespace {

std::string shakespeare(size_t n) {
  static const std::string text = testing::read_bytes("data/tinyshakespeare.txt");
  return text.substr(0, n);
}

std::vector<std::string> chunks_of(std::string_view text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    const size_t end = data::byte_chunk_end(text, i);
    out.emplace_back(text.substr(i, end - i));
    i = end;
  }
  return out;
}

}  // namespace

TEST_CASE("byte chunks follow GPT-2's shape", "[bpe]") {
  using V = std::vector<std::string>;
  CHECK(chunks_of("Hello world, it's 42!") == V{"Hello", " world", ",", " it", "'", "s", " 42", "!"});
  CHECK(chunks_of("a   b\n\nc  ") == V{"a", "  ", " b", "\n\n", "c", "  "});
  CHECK(chunks_of(std::string("caf\xc3\xa9 \xff\x00x", 9)) == V{"caf\xc3\xa9", " \xff", std::string(1, '\0'), "x"});
  CHECK(chunks_of("") == V{});
}

TEST_CASE("bpe merges the most frequent pair first, ties by smaller ids", "[bpe]") {
  const data::TokenizerSpec spec = data::bpe_train("ab ab ab cd", 259);
  REQUIRE(spec.tokens.size() == 259);
  CHECK(spec.tokens[256] == "ab");   // (a,b) x3
  CHECK(spec.tokens[257] == " ab");  // (' ',ab) x2
  CHECK(spec.tokens[258] == " c");   // the count-1 pairs (' ',c) and (c,d): ' ' < 'c'
  const data::Tokenizer tok = data::make_tokenizer(spec);
  CHECK(tok.encode("ab ab") == std::vector<int32_t>{256, 257});
}

TEST_CASE("bpe stops early when nothing is left to merge", "[bpe]") {
  const data::TokenizerSpec spec = data::bpe_train("aaaa", 1000);
  CHECK(spec.tokens.size() == 258);  // "aa", then "aaaa"
  CHECK_THROWS_AS(data::bpe_train("abc", 255), tg::UsageError);
}

TEST_CASE("bpe round-trips random bytes, invalid UTF-8 and NULs", "[bpe]") {
  const data::Tokenizer tok = data::make_tokenizer(data::bpe_train(shakespeare(200000), 512));
  CHECK(tok.vocab_size() == 512);
  tg::Rng rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    std::string bytes;
    const auto len = rng.below(300);
    for (uint64_t i = 0; i < len; ++i) {
      // Mix fully random bytes with text-like runs so merges actually apply.
      bytes += rng.below(3) == 0 ? static_cast<char>(rng.below(256)) : " etaoin\n\0\xff"[rng.below(10)];
    }
    INFO("trial " << trial);
    CHECK(tok.decode(tok.encode(bytes)) == bytes);
  }
  const std::string edge[] = {"", " ", "  ", "\n \n", std::string(1000, ' ') + "x", std::string(3, '\0'),
                              "\xc3", "\xed\xa0\x80", std::string(5000, 'e')};
  for (const std::string& s : edge) CHECK(tok.decode(tok.encode(s)) == s);
  const std::string text = shakespeare(50000);
  const auto ids = tok.encode(text);
  CHECK(ids.size() < text.size() / 2);  // it does compress
  CHECK(tok.decode(ids) == text);
}

TEST_CASE("bpe training is deterministic and survives tokenizer.json", "[bpe]") {
  const std::string text = shakespeare(300000);
  const data::TokenizerSpec a = data::bpe_train(text, 800);
  const data::TokenizerSpec b = data::bpe_train(text, 800);
  CHECK(a.tokens == b.tokens);
  CHECK(a.merges == b.merges);
  const data::Tokenizer from_json = data::make_tokenizer(data::tokenizer_json_parse(data::tokenizer_json_dump(a), "memory"));
  const data::Tokenizer direct = data::make_tokenizer(a);
  CHECK(from_json.encode(text) == direct.encode(text));
}

TEST_CASE("bpe trains thousands of merges on the full corpus quickly", "[bpe]") {
  const std::string text = shakespeare(std::string::npos);
  const auto t0 = std::chrono::steady_clock::now();
  const data::TokenizerSpec spec = data::bpe_train(text, 4096);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  WARN("bpe_train: 3840 merges on 1.1 MB in " << seconds << " s");
  CHECK(spec.tokens.size() == 4096);
  CHECK(seconds < 10.0);
}
