// tapegpt tokenize: encode text to token ids, or decode ids back to text,
// with the tokenizer of a prepared directory, a checkpoint, or GPT-2's.
#include <cxxopts.hpp>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/base/errors.h"
#include "checkpoints/checkpoint.h"
#include "data/gpt2_vocab.h"
#include "data/tokenizer.h"
#include "data/tokenizer_json.h"
#include "train/cli_util.h"
#include "train/commands.h"

namespace cli {
namespace {

std::string read_stdin() {
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

// Whitespace-separated integers; anything else is a DataError naming it.
std::vector<int32_t> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(word.c_str(), &end, 10);
    if (end == word.c_str() || *end != '\0' || errno == ERANGE || v < INT32_MIN || v > INT32_MAX) {
      throw tg::DataError("'" + word.substr(0, 40) + "' is not a token id; --decode expects integers separated by spaces");
    }
    ids.push_back(static_cast<int32_t>(v));
  }
  return ids;
}

data::Tokenizer tokenizer_from(const cxxopts::ParseResult& args) {
  const int sources = static_cast<int>(args.count("data") + args.count("ckpt") + args.count("tokenizer"));
  if (sources != 1) {
    throw tg::UsageError("tokenize needs exactly one of --data DIR, --ckpt FILE or --tokenizer gpt2|byte");
  }
  if (args.count("data")) return data::load_tokenizer_dir(args["data"].as<std::string>());
  if (args.count("ckpt")) {
    const std::string path = args["ckpt"].as<std::string>();
    const data::TokenizerSpec spec = checkpoints::load_checkpoint(path, /*with_optimizer=*/false).meta.tokenizer;
    try {
      return data::make_tokenizer(spec);
    } catch (const tg::DataError& e) {
      throw tg::DataError(path + ": " + e.what());
    }
  }
  const std::string name = args["tokenizer"].as<std::string>();
  if (name == "gpt2") return data::make_tokenizer(data::gpt2_spec());
  if (name == "byte") return data::make_tokenizer(data::byte_spec());
  throw tg::UsageError("--tokenizer " + name + " needs a vocabulary: use --tokenizer gpt2 or byte, or --data DIR for " +
                       "a prepared char or bpe tokenizer");
}

}  // namespace

int cmd_tokenize(int argc, char** argv) {
  cxxopts::Options options("tapegpt tokenize",
                           "Print the token ids of TEXT (or of stdin) on one line; with --decode, print the text of ids.");
  options.add_options()
      ("data", "prepared data directory whose tokenizer.json to use", cxxopts::value<std::string>())
      ("ckpt", "checkpoint whose tokenizer to use", cxxopts::value<std::string>())
      ("tokenizer", "a built-in tokenizer: gpt2 or byte", cxxopts::value<std::string>())
      ("decode", "read token ids (from TEXT or stdin) and print their text, byte for byte")
      ("text", "the text (or ids); stdin when absent, read exactly, trailing newline included",
       cxxopts::value<std::string>());
  add_common_options(options);
  options.parse_positional({"text"});
  options.positional_help("[TEXT]");
  cxxopts::ParseResult args;
  // A second TEXT is a stray argument: parse_or_help refuses it (quote text
  // that contains spaces).
  if (!parse_or_help(options, argc, argv, &args)) return 0;
  const std::string text = args.count("text") ? get<std::string>(args, "text") : read_stdin();
  const data::Tokenizer tok = tokenizer_from(args);

  if (args.count("decode")) {
    const std::string out = tok.decode(parse_ids(text));
    std::fwrite(out.data(), 1, out.size(), stdout);
    // A terminal prompt should not land on the text's last line; pipes get the exact bytes.
    if (isatty(STDOUT_FILENO) && (out.empty() || out.back() != '\n')) std::fputc('\n', stdout);
    return 0;
  }
  const std::vector<int32_t> ids = tok.encode(text);
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) line += ' ';
    line += std::to_string(ids[i]);
  }
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stdout);
  return 0;
}

}  // namespace cli
