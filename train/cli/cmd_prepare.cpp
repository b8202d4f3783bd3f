// tapegpt prepare: the command-line front end of data::prepare_corpus.
// Never split a file name at commas: each --input is one path.
#define CXXOPTS_VECTOR_DELIMITER '\0'
#include <cxxopts.hpp>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "autograd/base/errors.h"
#include "data/prepare.h"
#include "data/tokenizer_spec.h"
#include "train/cli/cli_util.h"
#include "train/cli/commands.h"

namespace cli {

int cmd_prepare(int argc, char** argv) {
  cxxopts::Options options("tapegpt prepare",
                           "Tokenize text files into DIR/train.bin, DIR/val.bin and DIR/tokenizer.json.");
  options.add_options()
      ("input", "text file, directory, quoted glob ('corpus/*.txt') or - for standard input; gzip, xz and "
       "zstd files are decompressed (repeat for several; concatenated in order)",
       cxxopts::value<std::vector<std::string>>())
      ("tokenizer", "char | byte | bpe | gpt2", cxxopts::value<std::string>())
      ("bpe-split", "bpe only: how text is cut into chunks before merging: byte-class (the default: by byte "
       "class, any bytes alike) or gpt2 (GPT-2's regex, as llama.cpp and Hugging Face split; needed for "
       "tapegpt export)",
       cxxopts::value<std::string>()->default_value("byte-class"))
      ("vocab-size", "bpe only: vocabulary size, 256 bytes + merges",
       cxxopts::value<int64_t>()->default_value(std::to_string(data::kDefaultBpeVocabSize)))
      ("val-fraction", "last fraction of the text kept for validation, in [0, 1)",
       cxxopts::value<double>()->default_value("0.1"))
      ("out", "output directory (created if missing)", cxxopts::value<std::string>())
      ("eot", "gpt2 only: put <|endoftext|> between documents (each input file is one document)")
      ("bpe-max-chunks", "bpe only: distinct chunks counted at most while learning merges (bounds memory)",
       cxxopts::value<int64_t>()->default_value(std::to_string(data::kDefaultBpeMaxChunks)));
  add_common_options(options);
  cxxopts::ParseResult args;
  if (!parse_or_help(options, argc, argv, &args)) return 0;
  if (!args.count("input")) throw tg::UsageError("prepare needs --input FILE (see tapegpt prepare --help)");
  if (!args.count("tokenizer")) throw tg::UsageError("prepare needs --tokenizer char|byte|bpe|gpt2");
  if (!args.count("out")) throw tg::UsageError("prepare needs --out DIR");

  data::PrepareOptions o;
  try {
    o.inputs = args["input"].as<std::vector<std::string>>();
    o.tokenizer = args["tokenizer"].as<std::string>();
    // --vocab-size has a default for --help, but only an explicit one is checked
    // against the tokenizer type.
    o.vocab_size = args.count("vocab-size") ? args["vocab-size"].as<int64_t>() : 0;
    // Like --vocab-size: only an explicit --bpe-split is checked against --tokenizer.
    if (args.count("bpe-split") && !data::split_parse(args["bpe-split"].as<std::string>(), &o.bpe_split))
      throw tg::UsageError("--bpe-split '" + args["bpe-split"].as<std::string>() + "' is not one of byte-class, gpt2");
    if (args.count("bpe-split") && o.tokenizer != "bpe")
      throw tg::UsageError("--bpe-split applies only to --tokenizer bpe (" + o.tokenizer +
                           " has its own pre-tokenizer)");
    o.val_fraction = args["val-fraction"].as<double>();
    o.out_dir = args["out"].as<std::string>();
    o.eot = args.count("eot") > 0;
    o.threads = args["threads"].as<int>();
    o.bpe_max_chunks = args["bpe-max-chunks"].as<int64_t>();
  } catch (const cxxopts::exceptions::exception& e) {
    throw tg::UsageError(std::string(e.what()) + "; see tapegpt prepare --help");
  }
  o.show_progress = isatty(STDERR_FILENO) != 0;

  const data::PrepareSummary s = data::prepare_corpus(o);
  std::printf("prepare: %s%s tokenizer, vocab size %lld\n", s.tokenizer.c_str(),
              o.bpe_split.empty() ? "" : (" (" + o.bpe_split + " split)").c_str(), static_cast<long long>(s.vocab_size));
  std::printf("prepare: train.bin %lld tokens (%lld bytes of text), val.bin %lld tokens (%lld bytes)\n",
              static_cast<long long>(s.train_tokens), static_cast<long long>(s.train_bytes),
              static_cast<long long>(s.val_tokens), static_cast<long long>(s.val_bytes));
  if (s.tokenizer == "bpe" && o.vocab_size > s.vocab_size) {
    std::printf("prepare: note: the text ran out of pairs to merge before --vocab-size %lld\n",
                static_cast<long long>(o.vocab_size));
  }
  std::printf("prepare: wrote %s/{train.bin,val.bin,tokenizer.json} in %.1f s\n", o.out_dir.c_str(), s.seconds);
  return 0;
}

}  // namespace cli
