// prepare: turn text files into train.bin, val.bin and tokenizer.json.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace data {

constexpr int64_t kDefaultBpeVocabSize = 1024;
constexpr int64_t kDefaultBlockBytes = int64_t{1} << 20;
constexpr int64_t kDefaultBpeMaxChunks = int64_t{1} << 20;
constexpr int32_t kGpt2EndOfText = 50256;  // <|endoftext|>

struct PrepareOptions {
  // Files, directories, globs or "-" (input_expand), concatenated in order:
  // a newline is added between files that lack one, or with eot each file is
  // a document.
  std::vector<std::string> inputs;
  std::string tokenizer;            // char | byte | bpe | gpt2
  int64_t vocab_size = 0;           // bpe only; 0 = kDefaultBpeVocabSize
  std::string bpe_split;            // bpe only: "" byte-class or "gpt2" (Note [BPE pre-split])
  double val_fraction = 0.1;        // the last fraction of the text is the validation split, [0, 1)
  std::string out_dir;              // created if missing
  bool show_progress = false;       // draw a \r progress line on stderr
  bool eot = false;                 // gpt2 only: <|endoftext|> between documents (input files)
  int threads = 0;                  // encoding threads; 0 = OpenMP's default (all cores)
  int64_t block_bytes = kDefaultBlockBytes;  // usual block length (tests make it tiny)
  int64_t bpe_max_chunks = kDefaultBpeMaxChunks;  // bpe: distinct chunks counted at most
};

struct PrepareSummary {
  std::string tokenizer;
  int64_t vocab_size = 0;
  int64_t train_tokens = 0, val_tokens = 0;
  int64_t train_bytes = 0, val_bytes = 0;  // text bytes in each split
  double seconds = 0;
};

// Reads, checks, splits, tokenizes and writes the three files of out_dir,
// streaming: memory stays bounded whatever the corpus size (Note [Streaming
// prepare] in prepare.cpp). Bad options throw tg::UsageError; inputs that are
// missing, unreadable, empty, binary (NUL bytes), corrupt (compressed) or,
// for char and gpt2, not UTF-8 throw tg::DataError naming the file. The text
// is split before tokenizing: val is its last val_fraction (cut at a UTF-8
// character boundary). The char vocabulary comes from all the text
// (nanoGPT); bpe learns merges from the train split only. The ids equal
// those of encoding the train and val text (and, with eot, each document)
// whole. Each file is replaced atomically, all three at the end.
PrepareSummary prepare_corpus(const PrepareOptions& options);

}  // namespace data
