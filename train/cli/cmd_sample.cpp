// `tapegpt sample`: stream text from a checkpoint through the KV-cache
// forward: the prompt in one pass, then one token at a time.
#include <chrono>
#include <cstdio>

#include "autograd/base/rng.h"
#include "nn/decode.h"
#include "nn/sampling.h"
#include "train/cli/cli_util.h"
#include "train/cli/commands.h"
#include "train/cli/load_model.h"
#include "train/decode_precision.h"

namespace cli {

int cmd_sample(int argc, char** argv) {
  cxxopts::Options opts("tapegpt sample",
                        "Generate text from a checkpoint, streamed to stdout token by token.\n"
                        "  tapegpt sample --ckpt CKPT [--prompt TEXT] [--max-new-tokens N] [--temperature T]\n"
                        "                 [--top-k K] [--top-p P] [--seed S]\n"
                        "Each token: softmax(logits / T), keep the K most likely, renormalise, keep the\n"
                        "smallest set reaching probability P, renormalise, draw.\n"
                        "Context: once prompt + output fill block_size tokens, the oldest half is dropped\n"
                        "and the newest block_size/2 tokens are re-encoded from position 0 (a context\n"
                        "shift, as llama.cpp's); the model never sees more than block_size tokens.\n"
                        "The prompt is read in one forward pass; its time and the generation's go to stderr.");
  opts.add_options()
      ("ckpt", "checkpoint to sample from", cxxopts::value<std::string>())
      ("prompt", "text to continue (default: a newline, or GPT-2's <|endoftext|>)", cxxopts::value<std::string>())
      ("max-new-tokens", "tokens to generate", cxxopts::value<int64_t>()->default_value("500"))
      ("temperature", "softmax temperature (0 = greedy)", cxxopts::value<double>()->default_value("1.0"))
      ("top-k", "keep only the K most likely tokens (0 = all)", cxxopts::value<int64_t>()->default_value("0"))
      ("top-p", "keep the smallest set of tokens with probability >= P", cxxopts::value<double>()->default_value("1.0"))
      ("seed", "random seed", cxxopts::value<uint64_t>()->default_value("1337"));
  add_precision_option(opts, "measures which generates faster here, and keeps the checkpoint's unless the other "
                             "is 1.1x faster (Note [Sampling precision]); give fp32 or bf16 for the same bits every run");
  add_common_options(opts);
  cxxopts::ParseResult r;
  if (!parse_or_help(opts, argc, argv, &r)) return 0;
  const std::string ckpt = required_ckpt(r);
  nn::SamplingOptions so;
  so.temperature = static_cast<float>(get<double>(r, "temperature"));
  so.top_k = get<int64_t>(r, "top-k");
  so.top_p = static_cast<float>(get<double>(r, "top-p"));
  const int64_t max_new = get<int64_t>(r, "max-new-tokens");
  if (!(so.temperature >= 0.0f && so.temperature <= 100.0f)) throw tg::UsageError("--temperature must be between 0 and 100");
  if (so.top_k < 0) throw tg::UsageError("--top-k must be 0 (off) or more");
  if (!(so.top_p > 0.0f && so.top_p <= 1.0f)) throw tg::UsageError("--top-p must be in (0, 1]");
  if (max_new < 0) throw tg::UsageError("--max-new-tokens must be 0 or more");
  if (so.temperature == 0.0f && (r.count("top-k") || r.count("top-p")))
    throw tg::UsageError("--temperature 0 is greedy decoding (always the most likely token), so "
                         "--top-k and --top-p would do nothing: drop them or give a temperature > 0");

  LoadedModel lm = load_model(ckpt);
  const train::PrecisionChoice precision = get<std::string>(r, "precision") == "auto"
                                               ? train::choose_decode_precision(lm.model, lm.trained, max_new)
                                               : apply_precision(r, lm);
  std::vector<int32_t> prompt;
  if (r.count("prompt") && !get<std::string>(r, "prompt").empty()) {
    prompt = lm.tokenizer.encode(get<std::string>(r, "prompt"));
  } else if (lm.tokenizer.type() == "gpt2") {
    prompt = {50256};  // <|endoftext|>: GPT-2's start of a document
  } else {
    try {
      prompt = lm.tokenizer.encode("\n");
    } catch (const tg::DataError&) {
      prompt = {0};  // a corpus without newlines: start from token 0
    }
  }
  if (prompt.empty()) prompt = {0};

  nn::Decoder decoder(lm.model);
  nn::TokenSampler sampler(lm.model.config.vocab_size);
  tg::Rng rng(get<uint64_t>(r, "seed"));
  const std::string shown = r.count("prompt") ? get<std::string>(r, "prompt") : std::string();
  std::fwrite(shown.data(), 1, shown.size(), stdout);
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const float* logits = decoder.feed(prompt);
  const auto t1 = Clock::now();
  for (int64_t i = 0; i < max_new; ++i) {
    const int32_t next = sampler.sample(logits, so, rng);
    const std::string& bytes = lm.tokenizer.token_bytes(next);
    std::fwrite(bytes.data(), 1, bytes.size(), stdout);
    std::fflush(stdout);
    if (i + 1 < max_new) logits = decoder.step(next);  // the last token's logits would go unread
  }
  std::fputc('\n', stdout);
  // Timings on stderr, apart from the text: the prompt is one forward pass,
  // each new token one more (Note [KV-cache forward] in nn/gpt.cpp).
  const double prompt_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  const double gen_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
  std::fprintf(stderr, "prompt: %zu tokens in %.1f ms; generated: %lld tokens in %.1f ms (%.1f tokens/s)\n",
               prompt.size(), prompt_ms, static_cast<long long>(max_new), gen_ms,
               gen_ms > 0 ? 1000.0 * static_cast<double>(max_new) / gen_ms : 0.0);
  std::fprintf(stderr, "precision: %s (%s)\n", train::precision_name(precision.precision), precision.reason.c_str());
  return 0;
}

}  // namespace cli
