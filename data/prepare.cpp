// The prepare pipeline: read, check, split, tokenize, write (see prepare.h).
#include "data/prepare.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "autograd/errors.h"
#include "data/atomic_file.h"
#include "data/bpe_train.h"
#include "data/file_read.h"
#include "data/gpt2_vocab.h"
#include "data/token_file.h"
#include "data/tokenizer.h"
#include "data/tokenizer_json.h"
#include "data/utf8.h"

namespace data {
namespace {

// Reads every input, rejecting what cannot be a text corpus.
std::string read_corpus(const PrepareOptions& o, bool need_utf8) {
  std::string text;
  for (const std::string& path : o.inputs) {
    std::string bytes = file_read(path, "input");
    if (bytes.empty()) throw tg::DataError("input " + path + " is empty; give a text file with some content");
    const size_t nul = bytes.find('\0');
    if (nul != std::string::npos) {
      throw tg::DataError("input " + path + " contains a NUL byte at offset " + std::to_string(nul) +
                          "; it looks like a binary file, not text");
    }
    const size_t bad = need_utf8 ? utf8_invalid_at(bytes) : std::string_view::npos;
    if (bad != std::string_view::npos) {
      throw tg::DataError("input " + path + " is not valid UTF-8 (byte offset " + std::to_string(bad) +
                          "); the " + o.tokenizer + " tokenizer needs UTF-8 text, so convert it or use --tokenizer bpe or byte");
    }
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += bytes;
  }
  return text;
}

// A "\r<label> 42%" line on stderr, redrawn when the percentage changes.
Progress progress_line(bool enabled, const std::string& label) {
  if (!enabled) return nullptr;
  auto last = std::make_shared<int>(-1);
  return [label, last](int64_t done, int64_t total) {
    const int pct = total > 0 ? static_cast<int>(100 * done / total) : 100;
    if (pct == *last) return;
    *last = pct;
    std::fprintf(stderr, "\r%s %3d%%", label.c_str(), pct);
    if (pct >= 100) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  };
}

void check_options(const PrepareOptions& o) {
  if (o.inputs.empty()) throw tg::UsageError("prepare needs at least one --input FILE");
  if (o.out_dir.empty()) throw tg::UsageError("prepare needs --out DIR");
  if (o.tokenizer != "char" && o.tokenizer != "byte" && o.tokenizer != "bpe" && o.tokenizer != "gpt2") {
    throw tg::UsageError("--tokenizer '" + o.tokenizer + "' is not one of char, byte, bpe, gpt2");
  }
  if (o.vocab_size != 0 && o.tokenizer != "bpe") {
    throw tg::UsageError("--vocab-size applies only to --tokenizer bpe (" + o.tokenizer + " has a fixed vocabulary)");
  }
  if (o.tokenizer == "bpe" && o.vocab_size != 0 && (o.vocab_size < 256 || o.vocab_size > kMaxVocabSize)) {
    throw tg::UsageError("--vocab-size " + std::to_string(o.vocab_size) + " must be in [256, " +
                         std::to_string(kMaxVocabSize) + "] (256 byte tokens plus merges)");
  }
  if (!(o.val_fraction >= 0.0 && o.val_fraction < 1.0)) {
    throw tg::UsageError("--val-fraction " + std::to_string(o.val_fraction) + " must be in [0, 1)");
  }
}

}  // namespace

namespace {

void write_prepared_dir(const std::string& dir, const std::vector<int32_t>& train,
                        const std::vector<int32_t>& val, int64_t vocab_size, const TokenizerSpec& spec) {
  AtomicFile train_file(dir + "/train.bin"), val_file(dir + "/val.bin"), json_file(dir + "/tokenizer.json");
  token_file_write_to(train_file, dir + "/train.bin", train.data(), static_cast<int64_t>(train.size()), vocab_size);
  token_file_write_to(val_file, dir + "/val.bin", val.data(), static_cast<int64_t>(val.size()), vocab_size);
  const std::string json = tokenizer_json_dump(spec);
  json_file.write(json.data(), json.size());
  for (AtomicFile* f : {&train_file, &val_file, &json_file}) f->finish();
  for (AtomicFile* f : {&train_file, &val_file, &json_file}) f->publish();
}

}  // namespace

PrepareSummary prepare_corpus(const PrepareOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  check_options(o);
  const bool need_utf8 = o.tokenizer == "char" || o.tokenizer == "gpt2";
  const std::string text = read_corpus(o, need_utf8);

  // floor(n * (1 - f)), as nanoGPT's data[:int(n*0.9)], then back to a character boundary.
  const auto train_bytes = static_cast<size_t>(static_cast<double>(text.size()) * (1.0 - o.val_fraction));
  const size_t cut = utf8_boundary_before(text, train_bytes);
  const std::string_view train_text = std::string_view(text).substr(0, cut);
  const std::string_view val_text = std::string_view(text).substr(cut);
  if (train_text.empty()) throw tg::UsageError("--val-fraction leaves no text for training; lower it");

  TokenizerSpec spec;
  if (o.tokenizer == "char") spec = char_spec_from_text(text);
  else if (o.tokenizer == "byte") spec = byte_spec();
  else if (o.tokenizer == "gpt2") spec = gpt2_spec();
  else spec = bpe_train(train_text, o.vocab_size ? o.vocab_size : kDefaultBpeVocabSize,
                        progress_line(o.show_progress, "prepare: learning bpe merges"));
  const Tokenizer tok = make_tokenizer(spec);

  const std::vector<int32_t> train = tok.encode(train_text, progress_line(o.show_progress, "prepare: tokenizing train"));
  const std::vector<int32_t> val = tok.encode(val_text, progress_line(o.show_progress && !val_text.empty(), "prepare: tokenizing val"));

  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) throw tg::DataError("cannot create --out directory " + o.out_dir + " (" + ec.message() + ")");
  // All three files are written to temporaries first and renamed only when
  // every one is complete, so a failure (a full disk) never leaves a new
  // train.bin beside an old val.bin or tokenizer.json.
  write_prepared_dir(o.out_dir, train, val, tok.vocab_size(), spec);

  PrepareSummary s;
  s.tokenizer = o.tokenizer;
  s.vocab_size = tok.vocab_size();
  s.train_tokens = static_cast<int64_t>(train.size());
  s.val_tokens = static_cast<int64_t>(val.size());
  s.train_bytes = static_cast<int64_t>(train_text.size());
  s.val_bytes = static_cast<int64_t>(val_text.size());
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace data
