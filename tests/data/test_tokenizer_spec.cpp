// make_tokenizer treats a spec as hostile input (it may come from a corrupt
// checkpoint or tokenizer.json): every bad spec is a DataError, never a crash.
#include <catch2/catch.hpp>

#include "autograd/base/errors.h"
#include "data/bpe_train.h"
#include "data/gpt2_vocab.h"
#include "data/tokenizer.h"
#include "data/tokenizer_json.h"
#include "support/files.h"

namespace {

data::TokenizerSpec small_bpe() { return data::bpe_train("the cat the hat the bat", 264); }

void check_rejected(const data::TokenizerSpec& spec, const char* why) {
  INFO(why);
  CHECK_THROWS_AS(data::make_tokenizer(spec), tg::DataError);
}

}  // namespace

TEST_CASE("make_tokenizer accepts the specs we build", "[spec]") {
  CHECK_NOTHROW(data::make_tokenizer(small_bpe()));
  CHECK_NOTHROW(data::make_tokenizer(data::byte_spec()));
  CHECK_NOTHROW(data::make_tokenizer(data::char_spec_from_text("abc")));
}

TEST_CASE("make_tokenizer rejects hostile specs", "[spec]") {
  data::TokenizerSpec s = small_bpe();
  s.type = "wordpiece";
  check_rejected(s, "unknown type");
  s.type = std::string("bp\ne\0", 5);
  check_rejected(s, "unprintable type");

  check_rejected(data::TokenizerSpec{"char", {}, {}}, "empty vocabulary");
  check_rejected(data::TokenizerSpec{"char", {"a", "ab"}, {}}, "char token of two characters");
  check_rejected(data::TokenizerSpec{"char", {"a", "a"}, {}}, "duplicate char");
  check_rejected(data::TokenizerSpec{"char", {"a", "\xff"}, {}}, "char token not UTF-8");
  check_rejected(data::TokenizerSpec{"char", {"a", ""}, {}}, "empty token");
  check_rejected(data::TokenizerSpec{"char", {"a", "b"}, {{0, 1}}}, "char with merges");

  data::TokenizerSpec b = data::byte_spec();
  b.tokens.pop_back();
  check_rejected(b, "byte with 255 tokens");
  b = data::byte_spec();
  b.tokens[65] = "B";
  check_rejected(b, "byte token not its byte");

  s = small_bpe();
  s.merges[3] = {-1, 5};
  check_rejected(s, "negative merge id");
  s = small_bpe();
  s.merges[3] = {5, 256 + 3};
  check_rejected(s, "merge refers to itself");
  s = small_bpe();
  s.merges[3] = {5, 1 << 30};
  check_rejected(s, "merge id far out of range");
  s = small_bpe();
  s.tokens.push_back("xy");
  check_rejected(s, "bpe token count without a merge");
  s = small_bpe();
  s.tokens[257] = "zz";
  check_rejected(s, "bpe token not the concatenation");
  s = small_bpe();
  s.merges[2] = s.merges[1];
  s.tokens[258] = s.tokens[257];
  check_rejected(s, "repeated bpe merge");
  s = small_bpe();
  s.tokens[10] = "\x0b\x0b";
  check_rejected(s, "bpe byte token changed");
  s = small_bpe();
  s.tokens[300 - 40] = std::string(data::kMaxTokenBytes + 1, 'a');
  check_rejected(s, "giant token");
  s = small_bpe();
  s.merges.resize(s.tokens.size() + 1, {0, 0});
  check_rejected(s, "more merges than tokens");

  data::TokenizerSpec g = data::gpt2_spec();
  g.merges[100] = {0, 50257};
  check_rejected(g, "gpt2 merge id out of range");
  g = data::gpt2_spec();
  g.tokens[5000] = g.tokens[6000];
  check_rejected(g, "gpt2 duplicate token");
  g = data::gpt2_spec();
  g.merges[0] = {g.merges[0][1], g.merges[0][0]};  // "t Ġ" makes bytes no token has
  check_rejected(g, "gpt2 merge result missing");
  g = data::gpt2_spec();
  g.tokens.resize(200);
  g.merges.clear();
  check_rejected(g, "gpt2 without all bytes");
}

TEST_CASE("tokenizer.json is read back exactly and rejected when malformed", "[spec]") {
  testing::TempDir dir;
  const data::TokenizerSpec spec = small_bpe();
  data::tokenizer_json_write(dir.file("tokenizer.json"), spec);
  const data::TokenizerSpec back = data::tokenizer_json_read(dir.file("tokenizer.json"));
  CHECK(back.type == spec.type);
  CHECK(back.tokens == spec.tokens);
  CHECK(back.merges == spec.merges);
  CHECK(data::load_tokenizer_dir(dir.path()).vocab_size() == 264);

  const auto rejected = [&](const std::string& json, const char* why) {
    INFO(why);
    testing::write_bytes(dir.file("tokenizer.json"), json);
    CHECK_THROWS_AS(data::load_tokenizer_dir(dir.path()), tg::DataError);
  };
  rejected("{not json", "syntax");
  rejected("[]", "not an object");
  rejected(R"({"format":"tapegpt-tokenizer","version":1,"type":"byte","tokens":["00"]})", "missing merges");
  rejected(R"({"format":"other","version":1,"type":"byte","tokens":[],"merges":[]})", "wrong format");
  rejected(R"({"format":"tapegpt-tokenizer","version":2,"type":"byte","tokens":[],"merges":[]})", "wrong version");
  rejected(R"({"format":"tapegpt-tokenizer","version":1,"type":"char","tokens":["6"],"merges":[]})", "odd hex");
  rejected(R"({"format":"tapegpt-tokenizer","version":1,"type":"char","tokens":["zz"],"merges":[]})", "bad hex");
  rejected(R"({"format":"tapegpt-tokenizer","version":1,"type":"char","tokens":[97],"merges":[]})", "token not a string");
  rejected(R"({"format":"tapegpt-tokenizer","version":1,"type":"char","tokens":["61"],"merges":[[1]]})", "bad merge");
  rejected(R"({"format":"tapegpt-tokenizer","version":1,"type":"char","tokens":["61","61"],"merges":[]})", "valid JSON, bad spec");
  CHECK_THROWS_WITH(data::load_tokenizer_dir(dir.path() + "/missing"), Catch::Contains("tokenizer.json"));
}
