// Streaming prepare: blocks cut at safe places give exactly the ids of
// encoding the text whole, for every tokenizer and block size; globs,
// directories, --eot, compressed inputs and standard input.
#include <catch2/catch.hpp>
#include <lzma.h>
#include <unistd.h>
#include <fcntl.h>
#include <zlib.h>
#include <zstd.h>

#include <random>

#include "autograd/base/errors.h"
#include "data/block_cut.h"
#include "data/bpe_train.h"
#include "data/gpt2_split.h"
#include "data/gpt2_vocab.h"
#include "data/prepare.h"
#include "data/token_file.h"
#include "data/tokenizer.h"
#include "data/tokenizer_json.h"
#include "data/utf8.h"
#include "support/files.h"

namespace {

// Pieces chosen to sit on block edges: multi-byte characters, whitespace runs
// of every kind, contractions, numbers, emoji with ZWJ and skin tones,
// non-ASCII spaces, letters and digits (JavaScript's \s differs from PCRE2's).
const std::vector<std::string> kPieces = {
    "Hello", " world", "the", " ", "  ", "        ", "\n", "\n\n", "\r\n", "\t", " \n", "  \n", "\n ",
    "it's", "'ll", "'re", "'ve", "'S", "don't", "'", "''", "123", " 4567", "3.14", "x1y2", "007",
    "\xc3\xa9", "caf\xc3\xa9", "na\xc3\xafve", "\xe4\xb8\xad\xe6\x96\x87", "\xe2\x80\x94", "\xe2\x80\x9cq\xe2\x80\x9d",
    "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x91\xa7",  // family: man ZWJ woman ZWJ girl
    "\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd",                                          // thumbs up, skin tone
    "\xc2\xa0", "\xe3\x80\x80", "\xef\xbb\xbf", "\xc2\x85", "!!", "...", "?", ",", "-", "$5",
    "\xc2\xb2", "\xd9\xa1\xd9\xa2", "\xe2\x85\xab", "\x0b", "\x0c", "a", "Z", "ID", "e.g.",
};

std::string random_text(std::mt19937& rng, int pieces) {
  std::string s;
  for (int i = 0; i < pieces; ++i) s += kPieces[rng() % kPieces.size()];
  return s;
}

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<int32_t> read_ids(const std::string& path) {
  const data::TokenFile f(path);
  std::vector<int32_t> ids(static_cast<size_t>(f.size()));
  f.copy(ids.data(), 0, f.size());
  return ids;
}

data::TokenizerSpec spec_for(const std::string& type, std::string_view text) {
  if (type == "char") return data::char_spec_from_text(text);
  if (type == "byte") return data::byte_spec();
  if (type == "gpt2") return data::gpt2_spec();
  return data::bpe_train(text, 420);
}

// The one-shot result prepare must reproduce: the text cut as prepare cuts
// it, each side encoded whole.
struct Expected {
  std::vector<int32_t> train, val;
  std::string json;
};

Expected one_shot(const std::string& type, const std::string& text, double val_fraction, int64_t vocab = 420) {
  const auto target = static_cast<size_t>(static_cast<double>(text.size()) * (1.0 - val_fraction));
  const size_t cut = data::utf8_boundary_before(text, target);
  const std::string_view train = std::string_view(text).substr(0, cut), val = std::string_view(text).substr(cut);
  data::TokenizerSpec spec = type == "char" ? data::char_spec_from_text(text)
                             : type == "bpe" ? data::bpe_train(train, vocab)
                                             : spec_for(type, text);
  const data::Tokenizer tok = data::make_tokenizer(spec);
  return {tok.encode(train), tok.encode(val), data::tokenizer_json_dump(spec)};
}

void check_prepared(const std::string& out, const Expected& e) {
  CHECK(read_ids(out + "/train.bin") == e.train);
  CHECK(read_ids(out + "/val.bin") == e.val);
  CHECK(testing::read_bytes(out + "/tokenizer.json") == e.json);
}

std::string gzip(const std::string& s) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, s.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  z.avail_in = static_cast<uInt>(s.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string xz(const std::string& s) {
  std::string out(lzma_stream_buffer_bound(s.size()), '\0');
  size_t pos = 0;
  REQUIRE(lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const uint8_t*>(s.data()), s.size(),
                                  reinterpret_cast<uint8_t*>(out.data()), &pos, out.size()) == LZMA_OK);
  out.resize(pos);
  return out;
}

std::string zstd(const std::string& s) {
  std::string out(ZSTD_compressBound(s.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), s.data(), s.size(), 1);
  REQUIRE(!ZSTD_isError(n));
  out.resize(n);
  return out;
}

}  // namespace

TEST_CASE("every safe cut splits the ids exactly, for every tokenizer", "[prepare_stream]") {
  std::mt19937 rng(13);
  std::string corpus;
  for (int i = 0; i < 40; ++i) corpus += random_text(rng, 40);
  for (const std::string type : {"byte", "char", "bpe", "gpt2"}) {
    INFO(type);
    const data::Tokenizer tok = data::make_tokenizer(spec_for(type, corpus));
    const data::CutRule rule = data::cut_rule_for(type);
    int64_t cuts = 0;
    for (int t = 0; t < 40; ++t) {
      const std::string text = random_text(rng, 30);
      const std::vector<int32_t> whole = tok.encode(text);
      for (size_t p = 1; p < text.size(); ++p) {
        if (!data::is_safe_cut(rule, text, p)) continue;
        ++cuts;
        const std::string_view v(text);
        if (concat(tok.encode(v.substr(0, p)), tok.encode(v.substr(p))) != whole) {
          FAIL("cut at " << p << " of [" << text << "] changes the ids");
        }
      }
    }
    CHECK(cuts > 200);  // the rules do find cuts in such text
  }
  // A newline before a character that the text cuts short: it may be a
  // space (U+3000 here), so the cut is not safe until the character is whole.
  const std::string ideographic_space = "a\n\xe3\x80\x80" "b";
  CHECK_FALSE(data::is_safe_cut(data::CutRule::kGpt2, std::string_view(ideographic_space).substr(0, 3), 2));
  CHECK_FALSE(data::is_safe_cut(data::CutRule::kGpt2, ideographic_space, 2));
  CHECK(data::is_safe_cut(data::CutRule::kGpt2, "a\nb", 2));
}

TEST_CASE("the GPT-2 ASCII fast path finds the words PCRE2 finds", "[prepare_stream]") {
  std::mt19937 rng(7);
  auto words = [](void (*split)(std::string_view, const std::function<void(size_t, size_t)>&), std::string_view t) {
    std::vector<std::pair<size_t, size_t>> w;
    split(t, [&](size_t b, size_t e) { w.emplace_back(b, e); });
    return w;
  };
  for (int t = 0; t < 3000; ++t) {
    const std::string text = random_text(rng, 1 + static_cast<int>(rng() % 20));
    REQUIRE(words(data::gpt2_split, text) == words(data::gpt2_split_reference, text));
  }
  const std::string shakespeare = testing::read_bytes("data/tinyshakespeare.txt").substr(0, 200000);
  CHECK(words(data::gpt2_split, shakespeare) == words(data::gpt2_split_reference, shakespeare));
}

TEST_CASE("streaming prepare equals one-shot encoding for every tokenizer and block size", "[prepare_stream]") {
  testing::TempDir dir;
  std::mt19937 rng(2024);
  // a lacks a final newline, so prepare joins the files with one.
  std::string a = random_text(rng, 300) + std::string(300, ' ') + "x" + std::string(70, '\n') + "it's 1234567 ";
  a += "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x91\xa7 end";
  const std::string b = random_text(rng, 300) + "\n";
  testing::write_bytes(dir.file("a.txt"), a);
  testing::write_bytes(dir.file("b.txt"), b);
  const std::string text = a + "\n" + b;
  for (const std::string type : {"byte", "char", "bpe", "gpt2"}) {
    for (const double f : {0.0, 0.37}) {
      const Expected e = one_shot(type, text, f);
      for (const int64_t block : {1, 2, 5, 64, 1 << 20}) {
        INFO(type << " val_fraction " << f << " block " << block);
        data::PrepareOptions o;
        o.inputs = {dir.file("a.txt"), dir.file("b.txt")};
        o.tokenizer = type;
        if (type == "bpe") o.vocab_size = 420;
        o.val_fraction = f;
        o.out_dir = dir.file("out");
        o.block_bytes = block;
        o.threads = 2;
        const data::PrepareSummary s = data::prepare_corpus(o);
        check_prepared(o.out_dir, e);
        CHECK(s.train_bytes + s.val_bytes == static_cast<int64_t>(text.size()));
      }
    }
  }
}

TEST_CASE("parallel encoding of many blocks equals one-shot encoding", "[prepare_stream]") {
  testing::TempDir dir;
  std::mt19937 rng(99);
  const std::string text = random_text(rng, 40000);  // ~200 KB: ~50 blocks of 4 KiB, several batches
  testing::write_bytes(dir.file("a.txt"), text);
  for (const std::string type : {"byte", "gpt2"}) {
    INFO(type);
    data::PrepareOptions o;
    o.inputs = {dir.file("a.txt")};
    o.tokenizer = type;
    o.val_fraction = 0.1;
    o.out_dir = dir.file("out");
    o.block_bytes = 4096;
    o.threads = 3;
    data::prepare_corpus(o);
    check_prepared(o.out_dir, one_shot(type, text, 0.1));
  }
}

TEST_CASE("a glob or directory of documents with --eot equals their encodings joined by <|endoftext|>", "[prepare_stream]") {
  testing::TempDir dir;
  std::filesystem::create_directory(dir.file("corpus"));
  std::mt19937 rng(5);
  std::vector<std::string> docs;
  for (int i = 0; i < 3; ++i) {
    docs.push_back(random_text(rng, 60 + 20 * i));
    testing::write_bytes(dir.file("corpus/doc" + std::to_string(i) + ".txt"), docs.back());
  }
  testing::write_bytes(dir.file("corpus/notes.md"), "not matched by the glob");
  const data::Tokenizer tok = data::make_tokenizer(data::gpt2_spec());
  for (const double f : {0.0, 0.5}) {
    // The reference: documents joined; the text cut at the split; each
    // document's part encoded whole; <|endoftext|> before each document
    // but the first, in the split where that document starts.
    std::string text;
    std::vector<size_t> starts;
    for (const std::string& d : docs) {
      starts.push_back(text.size());
      text += d;
    }
    const size_t cut = data::utf8_boundary_before(text, static_cast<size_t>(static_cast<double>(text.size()) * (1 - f)));
    std::vector<int32_t> expect[2];
    for (size_t i = 0; i < docs.size(); ++i) {
      const size_t begin = starts[i], end = begin + docs[i].size();
      if (i > 0) expect[begin >= cut].push_back(data::kGpt2EndOfText);
      if (begin < cut) expect[0] = concat(expect[0], tok.encode(std::string_view(text).substr(begin, std::min(end, cut) - begin)));
      if (end > cut) {
        const size_t b = std::max(begin, cut);
        expect[1] = concat(expect[1], tok.encode(std::string_view(text).substr(b, end - b)));
      }
    }
    for (const int64_t block : {1, 1 << 20}) {
      INFO("val_fraction " << f << " block " << block);
      data::PrepareOptions o;
      o.inputs = {dir.file("corpus/doc*.txt")};
      o.tokenizer = "gpt2";
      o.eot = true;
      o.val_fraction = f;
      o.out_dir = dir.file("out");
      o.block_bytes = block;
      data::prepare_corpus(o);
      CHECK(read_ids(o.out_dir + "/train.bin") == expect[0]);
      CHECK(read_ids(o.out_dir + "/val.bin") == expect[1]);
    }
  }
  // A directory is its files, sorted: here the glob's three plus notes.md.
  data::PrepareOptions o;
  o.inputs = {dir.file("corpus")};
  o.tokenizer = "gpt2";
  o.eot = true;
  o.val_fraction = 0;
  o.out_dir = dir.file("out");
  data::prepare_corpus(o);
  std::vector<int32_t> expect;
  for (const std::string& d : docs) expect = concat(concat(expect, tok.encode(d)), {data::kGpt2EndOfText});
  expect = concat(expect, tok.encode("not matched by the glob"));
  CHECK(read_ids(o.out_dir + "/train.bin") == expect);

  // An --out inside the input directory is not read back as input.
  o.out_dir = dir.file("corpus/prepared");
  data::prepare_corpus(o);
  data::prepare_corpus(o);
  CHECK(read_ids(o.out_dir + "/train.bin") == expect);

  o.tokenizer = "char";
  CHECK_THROWS_WITH(data::prepare_corpus(o), Catch::Contains("--eot needs --tokenizer gpt2"));
  o.tokenizer = "gpt2";
  o.inputs = {dir.file("corpus/*.json")};
  o.out_dir = dir.file("never_made");
  CHECK_THROWS_WITH(data::prepare_corpus(o), Catch::Contains("matches no file"));
  CHECK_FALSE(std::filesystem::exists(o.out_dir));  // a mistake leaves no empty --out behind
}

TEST_CASE("gzip, xz and zstd inputs give what their plain text gives", "[prepare_stream]") {
  testing::TempDir dir;
  std::mt19937 rng(11);
  const std::string a = random_text(rng, 2000), b = random_text(rng, 500);
  testing::write_bytes(dir.file("a.txt"), a);
  testing::write_bytes(dir.file("b.txt"), b);
  testing::write_bytes(dir.file("a.gz"), gzip(a.substr(0, 1000)) + gzip(a.substr(1000)));  // two members
  testing::write_bytes(dir.file("a.xz"), xz(a));
  testing::write_bytes(dir.file("b.zst"), zstd(b.substr(0, 100)) + zstd(b.substr(100)));    // two frames
  auto run = [&](std::vector<std::string> inputs, const std::string& tokenizer = "gpt2") {
    data::PrepareOptions o;
    for (auto& i : inputs) i = dir.file(i);
    o.inputs = inputs;
    o.tokenizer = tokenizer;
    o.val_fraction = 0.2;
    o.out_dir = dir.file("out");
    o.block_bytes = 4096;
    data::prepare_corpus(o);
    return std::make_pair(read_ids(o.out_dir + "/train.bin"), read_ids(o.out_dir + "/val.bin"));
  };
  const auto plain = run({"a.txt", "b.txt"});
  CHECK(run({"a.gz", "b.zst"}) == plain);
  CHECK(run({"a.xz", "b.txt"}) == plain);

  // Larger than every read buffer, so the decoders must flush what they hold.
  // Half varied text, half one line repeated, which compresses so well that
  // the decoders take in the last input long before giving the last output.
  std::string big;
  while (big.size() < (size_t{3} << 19)) big += random_text(rng, 1000);
  const std::string line = random_text(rng, 100) + "\n";
  while (big.size() < (size_t{3} << 20)) big += line;
  testing::write_bytes(dir.file("big.txt"), big);
  testing::write_bytes(dir.file("big.gz"), gzip(big));
  testing::write_bytes(dir.file("big.xz"), xz(big));
  testing::write_bytes(dir.file("big.zst"), zstd(big));
  const auto big_plain = run({"big.txt"}, "byte");
  CHECK(run({"big.gz"}, "byte") == big_plain);
  CHECK(run({"big.xz"}, "byte") == big_plain);
  CHECK(run({"big.zst"}, "byte") == big_plain);

  std::string broken = gzip(a);
  broken.resize(broken.size() / 2);
  testing::write_bytes(dir.file("broken.gz"), broken);
  CHECK_THROWS_WITH(run({"broken.gz"}), Catch::Contains("broken.gz") && Catch::Contains("gzip data is corrupt or truncated"));
  std::string bad = zstd(a);
  bad[bad.size() / 2] ^= 0x55;
  bad.resize(bad.size() - 3);
  testing::write_bytes(dir.file("bad.zst"), bad);
  CHECK_THROWS_AS(run({"bad.zst"}), tg::DataError);
}

TEST_CASE("--input - reads standard input", "[prepare_stream]") {
  testing::TempDir dir;
  const std::string text = "From standard input, it's 42 lines of text.\nAnd more.\n";
  testing::write_bytes(dir.file("in.txt"), gzip(text));
  const int saved = ::dup(STDIN_FILENO);
  const int fd = ::open(dir.file("in.txt").c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  ::dup2(fd, STDIN_FILENO);
  ::close(fd);
  data::PrepareOptions o;
  o.inputs = {"-"};
  o.tokenizer = "char";
  o.val_fraction = 0.25;
  o.out_dir = dir.file("out");
  data::prepare_corpus(o);
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  check_prepared(o.out_dir, one_shot("char", text, 0.25));
  CHECK(testing::count_files(o.out_dir) == 3);  // the copy of stdin was unlinked
  o.inputs = {"-", "-"};
  CHECK_THROWS_AS(data::prepare_corpus(o), tg::UsageError);
}

TEST_CASE("bpe chunk counts: unbounded equals bpe_train, a full table forgets rare chunks", "[prepare_stream]") {
  std::mt19937 rng(3);
  std::string text;
  for (int i = 0; i < 30; ++i) text += random_text(rng, 50);
  for (int i = 0; i < 2000; ++i) text += " w" + std::to_string(rng() % 100000);  // many rare chunks
  data::ChunkCounter unbounded(0);
  unbounded.add(text);
  CHECK(data::bpe_train_counts(unbounded.sorted(), 400).merges == data::bpe_train(text, 400).merges);
  data::ChunkCounter bounded(1024);
  bounded.add(text);
  CHECK(bounded.prunes() > 0);
  CHECK(bounded.dropped() > 0);
  const auto counts = bounded.sorted();
  CHECK(counts.size() <= 1024);
  const data::TokenizerSpec spec = data::bpe_train_counts(counts, 400);
  CHECK(spec.tokens.size() == 400);
  const data::Tokenizer tok = data::make_tokenizer(spec);
  CHECK(tok.decode(tok.encode(text)) == text);
}
