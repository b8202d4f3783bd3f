// The prepare pipeline: expand, scan, split, tokenize in blocks, write.
//
// Note [Streaming prepare]: the corpus is read twice and never held whole.
// Pass 1 (corpus_scan) reads every input to the end: it rejects empty,
// binary and (char, gpt2) non-UTF-8 inputs before anything is written,
// collects the char vocabulary, and measures the text, which fixes the
// train/val cut at floor(total * (1 - val_fraction)) bytes (a known-size
// split: compressed inputs are decompressed twice, standard input is first
// copied to an unlinked file in --out). bpe then reads the train text once
// more to count its chunks. Pass 2 cuts the text into blocks at safe cuts
// (Note [Safe block cuts]), encodes a batch of blocks on all threads, each
// with its own chunk cache, and appends their ids in order to train.bin or
// val.bin. Memory: the batch (16 blocks of text and their ids), one chunk
// cache per thread, and the bpe table (bpe_max_chunks chunks).
#include "data/prepare.h"

#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>

#include "autograd/base/check.h"
#include "autograd/base/errors.h"
#include "autograd/base/atomic_file.h"
#include "data/block_stream.h"
#include "data/bpe_train.h"
#include "data/chunk_cache.h"
#include "data/corpus_reader.h"
#include "data/gpt2_vocab.h"
#include "data/input_files.h"
#include "data/progress_meter.h"
#include "data/stdin_copy.h"
#include "data/token_writer.h"
#include "data/tokenizer.h"
#include "data/tokenizer_json.h"
#include "data/utf8.h"

namespace data {
namespace {

// Text per batch: 16 blocks (16 MiB by default) keep every thread busy with
// little memory; tests with tiny blocks thus cross batch edges too.
size_t batch_bytes(const PrepareOptions& o) { return static_cast<size_t>(o.block_bytes) * 16; }

void check_options(const PrepareOptions& o) {
  if (o.inputs.empty()) throw tg::UsageError("prepare needs at least one --input FILE");
  if (o.out_dir.empty()) throw tg::UsageError("prepare needs --out DIR");
  if (o.tokenizer != "char" && o.tokenizer != "byte" && o.tokenizer != "bpe" && o.tokenizer != "gpt2") {
    throw tg::UsageError("--tokenizer '" + o.tokenizer + "' is not one of char, byte, bpe, gpt2");
  }
  if (o.vocab_size != 0 && o.tokenizer != "bpe") {
    throw tg::UsageError("--vocab-size applies only to --tokenizer bpe (" + o.tokenizer + " has a fixed vocabulary)");
  }
  if (!o.bpe_split.empty() && o.tokenizer != "bpe") {
    throw tg::UsageError("--bpe-split applies only to --tokenizer bpe (" + o.tokenizer + " has its own pre-tokenizer)");
  }
  if (!o.bpe_split.empty() && o.bpe_split != kSplitGpt2) {
    throw tg::UsageError("--bpe-split '" + o.bpe_split + "' is not one of byte-class, gpt2");
  }
  if (o.tokenizer == "bpe" && o.vocab_size != 0 && (o.vocab_size < 256 || o.vocab_size > kMaxVocabSize)) {
    throw tg::UsageError("--vocab-size " + std::to_string(o.vocab_size) + " must be in [256, " +
                         std::to_string(kMaxVocabSize) + "] (256 byte tokens plus merges)");
  }
  if (!(o.val_fraction >= 0.0 && o.val_fraction < 1.0)) {
    throw tg::UsageError("--val-fraction " + std::to_string(o.val_fraction) + " must be in [0, 1)");
  }
  if (o.eot && o.tokenizer != "gpt2") {
    throw tg::UsageError("--eot needs --tokenizer gpt2, whose vocabulary has <|endoftext|>; the " + o.tokenizer +
                         " tokenizer has no separator token, so end documents with a blank line instead");
  }
  if (o.threads < 0 || o.threads > 4096) throw tg::UsageError("--threads must be between 0 (all cores) and 4096");
  if (o.block_bytes < 1) throw tg::UsageError("block size must be positive");
  if (o.bpe_max_chunks < 1024) throw tg::UsageError("--bpe-max-chunks must be at least 1024");
}

// The bpe merges, learned from the chunks of the train text (pass 1b).
TokenizerSpec learn_bpe(const PrepareOptions& o, const std::vector<CorpusInput>& inputs, int64_t total,
                        int64_t cut_target) {
  CorpusReader reader(inputs, !o.eot);
  BlockStream stream(reader, cut_rule_for("bpe", o.bpe_split), total, cut_target,
                     static_cast<size_t>(o.block_bytes));
  ChunkCounter counter(static_cast<size_t>(o.bpe_max_chunks), o.bpe_split);
  ProgressMeter meter(o.show_progress, "prepare: counting bpe chunks", cut_target);
  for (bool train = true; train;) {
    const std::vector<TextBlock>& blocks = stream.next_batch(batch_bytes(o));
    if (blocks.empty()) break;
    for (const TextBlock& b : blocks) {
      if (b.split != 0) {
        train = false;
        break;
      }
      counter.add(b.text);
    }
    meter.update(stream.bytes_done());
  }
  meter.finish();
  const int64_t vocab = o.vocab_size ? o.vocab_size : kDefaultBpeVocabSize;
  auto last = std::make_shared<int>(-1);
  Progress progress = nullptr;
  if (o.show_progress) {
    progress = [last](int64_t done, int64_t wanted) {
      const int pct = wanted > 0 ? static_cast<int>(100 * done / wanted) : 100;
      if (pct == *last) return;
      *last = pct;
      std::fprintf(stderr, "\rprepare: learning bpe merges %3d%%%s", pct, pct >= 100 ? "\n" : "");
      std::fflush(stderr);
    };
  }
  return bpe_train_counts(counter.sorted(), vocab, progress, o.bpe_split);
}

// Made only once the inputs have passed their checks (or standard input
// needs a place), so a mistake leaves no empty directory behind.
void make_out_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw tg::DataError("cannot create --out directory " + dir + " (" + ec.message() + ")");
}

struct Written {
  int64_t train_tokens = 0, val_tokens = 0, cut = 0;
};

// Pass 2: every block encoded (in parallel), its ids appended in order.
Written encode_corpus(const PrepareOptions& o, const Tokenizer& tok, const std::vector<CorpusInput>& inputs,
                      int64_t total, int64_t cut_target, TokenWriter& train, TokenWriter& val) {
  CorpusReader reader(inputs, !o.eot);
  BlockStream stream(reader, cut_rule_for(o.tokenizer, tok.spec().split), total, cut_target,
                     static_cast<size_t>(o.block_bytes));
  const int threads = o.threads > 0 ? o.threads : omp_get_max_threads();
  std::vector<std::unique_ptr<ChunkCache>> caches(static_cast<size_t>(threads));
  for (auto& c : caches) c = std::make_unique<ChunkCache>();
  std::vector<std::vector<int32_t>> ids;
  std::vector<std::exception_ptr> errors;
  ProgressMeter meter(o.show_progress, "prepare: tokenizing", total);
  const int32_t eot = kGpt2EndOfText;
  for (;;) {
    const std::vector<TextBlock>& blocks = stream.next_batch(batch_bytes(o));
    if (blocks.empty()) break;
    const auto n = static_cast<int64_t>(blocks.size());
    ids.resize(blocks.size());
    errors.assign(blocks.size(), nullptr);
    // Tiny blocks (tests) are not worth waking threads for.
    const bool parallel = n > 1 && o.block_bytes >= 4096;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (parallel)
    for (int64_t i = 0; i < n; ++i) {
      ids[i].clear();
      try {
        tok.encode_append(blocks[i].text, ids[i], *caches[omp_get_thread_num()]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      if (errors[i]) std::rethrow_exception(errors[i]);
      TokenWriter& w = blocks[i].split == 0 ? train : val;
      if (blocks[i].doc_start) w.append(&eot, 1);
      w.append(ids[i].data(), ids[i].size());
    }
    meter.update(stream.bytes_done());
  }
  meter.finish();
  return {train.count(), val.count(), stream.cut()};
}

}  // namespace

PrepareSummary prepare_corpus(const PrepareOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  check_options(o);
  const std::vector<std::string> paths = input_expand(o.inputs, o.out_dir);
  std::unique_ptr<StdinCopy> stdin_copy;
  std::vector<CorpusInput> inputs;
  for (const std::string& p : paths) {
    CorpusInput in;
    in.path = p;
    if (p == "-") {
      make_out_dir(o.out_dir);
      stdin_copy = std::make_unique<StdinCopy>(o.out_dir);
      in.path = "standard input";
      in.fd = stdin_copy->fd();
    }
    inputs.push_back(in);
  }

  // Pass 1: check and measure.
  std::vector<bool> chars;
  CorpusScanOptions scan;
  scan.need_utf8 = o.tokenizer == "char" || o.tokenizer == "gpt2";
  scan.join_newline = !o.eot;
  if (o.tokenizer == "char") {
    chars.assign(0x110000, false);
    scan.chars = &chars;
  }
  const int64_t total = corpus_scan(inputs, scan);
  // floor(n * (1 - f)), as nanoGPT's data[:int(n*0.9)], then back to a character boundary.
  const auto cut_target = static_cast<int64_t>(static_cast<double>(total) * (1.0 - o.val_fraction));
  if (cut_target < 1) throw tg::UsageError("--val-fraction leaves no text for training; lower it");

  TokenizerSpec spec;
  if (o.tokenizer == "char") {
    spec.type = "char";
    for (uint32_t cp = 0; cp < chars.size(); ++cp) {
      if (chars[cp]) spec.tokens.push_back(utf8_encode(cp));
    }
  } else if (o.tokenizer == "byte") {
    spec = byte_spec();
  } else if (o.tokenizer == "gpt2") {
    spec = gpt2_spec();
    TG_CHECK(spec.tokens.size() > static_cast<size_t>(kGpt2EndOfText) && spec.tokens[kGpt2EndOfText] == "<|endoftext|>");
  } else {
    spec = learn_bpe(o, inputs, total, cut_target);
  }
  const Tokenizer tok = make_tokenizer(spec);

  // Pass 2: tokenize into temporaries; all three files are renamed only when
  // every one is complete, so a failure (a full disk) never leaves a new
  // train.bin beside an old val.bin or tokenizer.json.
  const std::string dir = o.out_dir;
  make_out_dir(dir);
  tg::AtomicFile train_file(dir + "/train.bin"), val_file(dir + "/val.bin"), json_file(dir + "/tokenizer.json");
  TokenWriter train(train_file, dir + "/train.bin", tok.vocab_size());
  TokenWriter val(val_file, dir + "/val.bin", tok.vocab_size());
  const Written w = encode_corpus(o, tok, inputs, total, cut_target, train, val);
  if (w.cut < 1) throw tg::UsageError("--val-fraction leaves no text for training; lower it");
  train.finish();
  val.finish();
  const std::string json = tokenizer_json_dump(spec);
  json_file.write(json.data(), json.size());
  for (tg::AtomicFile* f : {&train_file, &val_file, &json_file}) f->finish();
  for (tg::AtomicFile* f : {&train_file, &val_file, &json_file}) f->publish();

  PrepareSummary s;
  s.tokenizer = o.tokenizer;
  s.vocab_size = tok.vocab_size();
  s.train_tokens = w.train_tokens;
  s.val_tokens = w.val_tokens;
  s.train_bytes = w.cut;
  s.val_bytes = total - w.cut;
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace data
