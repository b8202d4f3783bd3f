// `tapegpt eval`: loss (nats/token), perplexity and bits per byte of a
// checkpoint on a token file or a text file.
#include <cmath>
#include <cstdio>
#include <vector>

#include "data/file_read.h"
#include "data/token_file.h"
#include "train/cli/cli_util.h"
#include "train/cli/commands.h"
#include "train/evaluate.h"
#include "train/cli/load_model.h"

namespace cli {

int cmd_eval(int argc, char** argv) {
  cxxopts::Options opts("tapegpt eval",
                        "Score a checkpoint on held-out text: mean loss in nats per token, perplexity\n"
                        "exp(loss), bits per byte of the original text, and the tokens scored.\n"
                        "  tapegpt eval --ckpt CKPT (--tokens FILE.bin | --text FILE) [--stride S] [--json]");
  opts.add_options()
      ("ckpt", "checkpoint to evaluate", cxxopts::value<std::string>())
      ("tokens", "a token file made by 'tapegpt prepare' (e.g. DIR/val.bin)", cxxopts::value<std::string>())
      ("text", "a text file, encoded with the checkpoint's tokenizer", cxxopts::value<std::string>())
      ("stride", "sliding windows advancing S tokens (S < block_size); default: non-overlapping windows",
       cxxopts::value<int64_t>()->default_value("0"))
      ("batch-size", "windows per forward pass", cxxopts::value<int64_t>()->default_value("8"))
      ("json", "print one JSON object instead of text");
  add_precision_option(opts);
  add_common_options(opts);
  cxxopts::ParseResult r;
  if (!parse_or_help(opts, argc, argv, &r)) return 0;
  const std::string ckpt = required_ckpt(r);
  if (r.count("tokens") + r.count("text") != 1)
    throw tg::UsageError("give exactly one of --tokens FILE.bin or --text FILE");
  const int64_t stride = get<int64_t>(r, "stride");
  const int64_t batch = get<int64_t>(r, "batch-size");
  if (batch < 1 || batch > 4096) throw tg::UsageError("--batch-size must be between 1 and 4096");

  LoadedModel lm = load_model(ckpt);
  const train::PrecisionChoice precision = apply_precision(r, lm);
  const int64_t T = lm.model.config.block_size;
  if (stride < 0 || stride >= T + 1)
    throw tg::UsageError("--stride must be between 1 and block_size (" + std::to_string(T) + ")");

  std::vector<int64_t> token_bytes(static_cast<size_t>(lm.tokenizer.vocab_size()));
  for (int32_t id = 0; id < lm.tokenizer.vocab_size(); ++id)
    token_bytes[static_cast<size_t>(id)] = static_cast<int64_t>(lm.tokenizer.token_bytes(id).size());

  std::vector<int32_t> text_ids;
  std::unique_ptr<data::TokenFile> file;
  train::TokenSource source;
  if (r.count("text")) {
    const std::string path = get<std::string>(r, "text");
    text_ids = lm.tokenizer.encode(data::file_read(path, "text file"));
    source.size = static_cast<int64_t>(text_ids.size());
    source.copy = [&](int32_t* dst, int64_t start, int64_t n) {
      std::copy_n(text_ids.data() + start, n, dst);
    };
  } else {
    file = std::make_unique<data::TokenFile>(get<std::string>(r, "tokens"));
    if (file->vocab_size() > lm.model.config.vocab_size)
      throw tg::DataError(file->path() + " uses " + std::to_string(file->vocab_size()) +
                          " token ids but the model knows " + std::to_string(lm.model.config.vocab_size) +
                          "; evaluate a token file made with the checkpoint's tokenizer");
    source.size = file->size();
    source.copy = [&](int32_t* dst, int64_t start, int64_t n) { file->copy(dst, start, n); };
  }
  if (source.size < 2)
    throw tg::DataError("the text has fewer than 2 tokens: nothing to score; give a longer text");

  train::EvalOptions eo;
  eo.stride = stride;
  eo.batch_size = batch;
  eo.token_bytes = &token_bytes;
  autograd::Arena arena;
  const train::EvalResult res = train::evaluate_tokens(lm.model, source, eo, arena);
  const double loss = res.mean_loss();
  const double bpb = res.bytes ? res.loss_sum / std::log(2.0) / static_cast<double>(res.bytes) : 0.0;
  if (r.count("json")) {
    std::printf("{\"loss\":%.9g,\"perplexity\":%.9g,\"bits_per_byte\":%.9g,\"tokens\":%lld,\"bytes\":%lld,"
                "\"precision\":\"%s\"}\n",
                loss, std::exp(loss), bpb, static_cast<long long>(res.tokens), static_cast<long long>(res.bytes),
                train::precision_name(precision.precision));
  } else {
    std::printf("loss %.4f nats/token | perplexity %.3f | %.4f bits/byte | %lld tokens scored (%lld bytes) | %s (%s)\n",
                loss, std::exp(loss), bpb, static_cast<long long>(res.tokens), static_cast<long long>(res.bytes),
                train::precision_name(precision.precision), precision.reason.c_str());
  }
  return 0;
}

}  // namespace cli
