// prepare: the files it writes decode back to the text, the split is where
// it should be, and bad inputs and flags give the right kind of error.
#include <catch2/catch.hpp>

#include "autograd/base/errors.h"
#include "data/prepare.h"
#include "data/token_file.h"
#include "data/tokenizer.h"
#include "data/tokenizer_json.h"
#include "support/files.h"
#include "train/cli/commands.h"

namespace {

std::string decode_file(const data::Tokenizer& tok, const std::string& path) {
  const data::TokenFile f(path);
  std::vector<int32_t> ids(static_cast<size_t>(f.size()));
  f.copy(ids.data(), 0, f.size());
  return tok.decode(ids);
}

data::PrepareOptions options(const testing::TempDir& dir, const std::string& tokenizer) {
  data::PrepareOptions o;
  o.inputs = {dir.file("a.txt"), dir.file("b.txt")};
  o.tokenizer = tokenizer;
  o.out_dir = dir.file("out");
  return o;
}

int run_prepare(std::vector<std::string> args) {
  args.insert(args.begin(), "prepare");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return cli::cmd_prepare(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

TEST_CASE("prepare writes token files that decode to the split text", "[prepare]") {
  testing::TempDir dir;
  const std::string a = "First Citizen:\nBefore we proceed any further, hear me speak.\n";
  const std::string b = "All:\nSpeak, speak. Caf\xc3\xa9 \xe2\x80\x94 na\xc3\xafve.";  // no final newline
  testing::write_bytes(dir.file("a.txt"), a);
  testing::write_bytes(dir.file("b.txt"), b);
  const std::string text = a + b;

  for (const std::string tokenizer : {"char", "byte", "bpe", "gpt2"}) {
    INFO(tokenizer);
    data::PrepareOptions o = options(dir, tokenizer);
    o.val_fraction = 0.25;
    if (tokenizer == "bpe") o.vocab_size = 300;
    const data::PrepareSummary s = data::prepare_corpus(o);
    const data::Tokenizer tok = data::load_tokenizer_dir(o.out_dir);
    CHECK(tok.type() == tokenizer);
    CHECK(s.vocab_size == tok.vocab_size());
    const std::string train = decode_file(tok, o.out_dir + "/train.bin");
    const std::string val = decode_file(tok, o.out_dir + "/val.bin");
    CHECK(train + val == text);
    CHECK(train.size() == static_cast<size_t>(text.size() * 0.75));
    CHECK(s.train_tokens + s.val_tokens > 0);
    CHECK(data::TokenFile(o.out_dir + "/val.bin").vocab_size() == tok.vocab_size());
  }
}

TEST_CASE("prepare cuts the split at a UTF-8 boundary", "[prepare]") {
  testing::TempDir dir;
  testing::write_bytes(dir.file("a.txt"), "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");  // 10 bytes
  data::PrepareOptions o = options(dir, "char");
  o.inputs = {dir.file("a.txt")};
  o.val_fraction = 0.25;  // a cut at byte 7 would split a character; 6 does not
  const data::PrepareSummary s = data::prepare_corpus(o);
  CHECK(s.train_bytes == 6);
  CHECK(s.val_bytes == 4);
  CHECK(s.vocab_size == 1);
}

TEST_CASE("prepare rejects unusable inputs with a DataError naming them", "[prepare]") {
  testing::TempDir dir;
  testing::write_bytes(dir.file("a.txt"), "hello there\n");
  testing::write_bytes(dir.file("b.txt"), "");
  data::PrepareOptions o = options(dir, "char");
  CHECK_THROWS_WITH(data::prepare_corpus(o), Catch::Contains("b.txt") && Catch::Contains("empty"));
  testing::write_bytes(dir.file("b.txt"), std::string("bin\0ary", 7));
  CHECK_THROWS_WITH(data::prepare_corpus(o), Catch::Contains("b.txt") && Catch::Contains("NUL"));
  testing::write_bytes(dir.file("b.txt"), "latin1 caf\xe9");
  CHECK_THROWS_WITH(data::prepare_corpus(o), Catch::Contains("b.txt") && Catch::Contains("UTF-8"));
  o.tokenizer = "gpt2";
  CHECK_THROWS_AS(data::prepare_corpus(o), tg::DataError);
  o.tokenizer = "bpe";  // bytes are fine for bpe
  CHECK_NOTHROW(data::prepare_corpus(o));
  o.inputs = {dir.file("missing.txt")};
  CHECK_THROWS_WITH(data::prepare_corpus(o), Catch::Contains("missing.txt"));
  std::filesystem::create_directory(dir.file("empty_dir"));
  o.inputs = {dir.file("empty_dir")};
  CHECK_THROWS_WITH(data::prepare_corpus(o), Catch::Contains("empty_dir") && Catch::Contains("no (non-hidden) files"));
}

TEST_CASE("prepare --bpe-split gpt2 learns and encodes GPT-2 words, blocks cut anywhere safe", "[prepare]") {
  testing::TempDir dir;
  std::string a;
  for (int i = 0; i < 40; ++i) a += "We're  done -- aren't we? 12345\n\n\n  Caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x99\x82\n";
  const std::string b = "Latin-1 caf\xe9, a cut \xe2\x82 euro\n\nThe end.";  // invalid UTF-8 is fine for bpe
  testing::write_bytes(dir.file("a.txt"), a);
  testing::write_bytes(dir.file("b.txt"), b);
  data::PrepareOptions o = options(dir, "bpe");
  o.vocab_size = 300;
  o.bpe_split = "gpt2";
  o.val_fraction = 0.2;
  o.block_bytes = 7;  // many blocks: every cut must be a safe one
  data::prepare_corpus(o);
  const data::Tokenizer tok = data::load_tokenizer_dir(o.out_dir);
  CHECK(tok.spec().split == "gpt2");
  CHECK(tok.vocab_size() > 256);  // this repetitive text may run out of pairs before 300
  const std::string train = decode_file(tok, o.out_dir + "/train.bin");
  const std::string val = decode_file(tok, o.out_dir + "/val.bin");
  CHECK(train + val == a + b);
  std::vector<int32_t> whole = tok.encode(train), val_ids = tok.encode(val);
  whole.insert(whole.end(), val_ids.begin(), val_ids.end());
  std::vector<int32_t> written;
  for (const char* name : {"/train.bin", "/val.bin"}) {
    const data::TokenFile f(o.out_dir + name);
    written.resize(written.size() + static_cast<size_t>(f.size()));
    f.copy(written.data() + written.size() - f.size(), 0, f.size());
  }
  CHECK(written == whole);  // the ids of encoding each split whole
}

TEST_CASE("prepare rejects bad options with a UsageError", "[prepare]") {
  testing::TempDir dir;
  testing::write_bytes(dir.file("a.txt"), "hello there\n");
  testing::write_bytes(dir.file("b.txt"), "general kenobi\n");
  data::PrepareOptions o = options(dir, "words");
  CHECK_THROWS_AS(data::prepare_corpus(o), tg::UsageError);
  o = options(dir, "char");
  o.vocab_size = 500;
  CHECK_THROWS_AS(data::prepare_corpus(o), tg::UsageError);
  o = options(dir, "bpe");
  o.vocab_size = 100;
  CHECK_THROWS_AS(data::prepare_corpus(o), tg::UsageError);
  o = options(dir, "char");
  o.val_fraction = 1.0;
  CHECK_THROWS_AS(data::prepare_corpus(o), tg::UsageError);
  o.val_fraction = -0.1;
  CHECK_THROWS_AS(data::prepare_corpus(o), tg::UsageError);
}

TEST_CASE("tapegpt prepare parses its flags", "[prepare][cli]") {
  testing::TempDir dir;
  testing::write_bytes(dir.file("a.txt"), "hello there, general kenobi\n");
  const std::string out = dir.file("out");
  CHECK(run_prepare({"--input", dir.file("a.txt"), "--tokenizer", "bpe", "--vocab-size", "260", "--val-fraction",
                     "0.2", "--out", out}) == 0);
  CHECK(data::load_tokenizer_dir(out).vocab_size() <= 260);
  CHECK(run_prepare({"--help"}) == 0);
  CHECK_THROWS_AS(run_prepare({"--input", dir.file("a.txt"), "--out", out}), tg::UsageError);
  CHECK_THROWS_AS(run_prepare({"--input", dir.file("a.txt"), "--tokenizer", "char"}), tg::UsageError);
  CHECK_THROWS_AS(run_prepare({"--bogus"}), tg::UsageError);
  CHECK_THROWS_AS(run_prepare({"--input", dir.file("a.txt"), "--tokenizer", "char", "--out", out, "stray"}),
                  tg::UsageError);
  CHECK_THROWS_AS(run_prepare({"--input", dir.file("a.txt"), "--tokenizer", "char", "--out", out, "--val-fraction",
                               "lots"}),
                  tg::UsageError);
  CHECK_THROWS_AS(run_prepare({"--input", dir.file("a.txt"), "--tokenizer", "char", "--vocab-size", "300", "--out", out}),
                  tg::UsageError);
  CHECK(run_prepare({"--input", dir.file("a.txt"), "--tokenizer", "gpt2", "--eot", "--threads", "1", "--out", out}) == 0);
  CHECK_THROWS_WITH(run_prepare({"--input", dir.file("a.txt"), "--tokenizer", "byte", "--eot", "--out", out}),
                    Catch::Contains("--eot needs --tokenizer gpt2"));
  CHECK_THROWS_AS(run_prepare({"--input", dir.file("a.txt"), "--tokenizer", "byte", "--threads", "-1", "--out", out}),
                  tg::UsageError);
  CHECK_THROWS_AS(run_prepare({"--input", dir.file("a.txt"), "--tokenizer", "bpe", "--bpe-max-chunks", "10", "--out", out}),
                  tg::UsageError);
  CHECK(run_prepare({"--input", dir.file("a.txt"), "--tokenizer", "bpe", "--bpe-split", "gpt2", "--vocab-size", "260",
                     "--out", out}) == 0);
  CHECK(data::load_tokenizer_dir(out).spec().split == "gpt2");
  CHECK(run_prepare({"--input", dir.file("a.txt"), "--tokenizer", "bpe", "--bpe-split", "byte-class", "--out", out}) == 0);
  CHECK(data::load_tokenizer_dir(out).spec().split.empty());
  CHECK_THROWS_WITH(run_prepare({"--input", dir.file("a.txt"), "--tokenizer", "bpe", "--bpe-split", "gpt4", "--out", out}),
                    Catch::Contains("--bpe-split 'gpt4'"));
  CHECK_THROWS_WITH(run_prepare({"--input", dir.file("a.txt"), "--tokenizer", "char", "--bpe-split", "gpt2", "--out", out}),
                    Catch::Contains("--bpe-split applies only to --tokenizer bpe"));
}
