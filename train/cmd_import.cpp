// `tapegpt import`: a Hugging Face GPT-2 (model.safetensors + config.json)
// into a tapegpt checkpoint with GPT-2's tokenizer, ready for eval, sample
// and `train --init-from` (Note [Hugging Face GPT-2 layout]).
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>

#include "autograd/base/errors.h"
#include "checkpoints/checkpoint.h"
#include "checkpoints/hf_gpt2.h"
#include "checkpoints/safetensors.h"
#include "data/file_read.h"
#include "data/gpt2_vocab.h"
#include "train/cli_util.h"
#include "train/commands.h"

namespace cli {

namespace {

// config.json is a page of settings; anything this large is another file.
constexpr int64_t kMaxConfigBytes = int64_t{1} << 24;

// "F32", or "F16 and F32" when the file mixes them (the buffers may differ).
std::string dtypes_used(const checkpoints::Safetensors& st) {
  std::map<std::string, int> seen;
  for (const checkpoints::SafetensorsTensor& t : st.tensors)
    if (checkpoints::safetensors_float_dtype(t.dtype)) seen[t.dtype] = 1;
  std::string out;
  for (const auto& [d, _] : seen) out += (out.empty() ? "" : " and ") + d;
  return out.empty() ? "no float" : out;
}

}  // namespace

int cmd_import(int argc, char** argv) {
  cxxopts::Options opts("tapegpt import",
                        "Import a Hugging Face GPT-2 (gpt2, gpt2-medium, -large, -xl or a fine-tuned one)\n"
                        "into a tapegpt checkpoint with GPT-2's tokenizer.\n"
                        "  tapegpt import --safetensors model.safetensors [--config config.json] --out CKPT.h5");
  opts.add_options()
      ("safetensors", "the model's weights (model.safetensors; F32, F16 or BF16)", cxxopts::value<std::string>())
      ("config", "the model's config.json (without it the shape is inferred from the tensors)",
       cxxopts::value<std::string>())
      ("out", "checkpoint to write (.h5)", cxxopts::value<std::string>())
      ("overwrite", "replace --out if it already exists");
  add_common_options(opts);
  cxxopts::ParseResult r;
  if (!parse_or_help(opts, argc, argv, &r)) return 0;
  if (!r.count("safetensors"))
    throw tg::UsageError("--safetensors FILE is required (a GPT-2 model.safetensors from Hugging Face)");
  if (!r.count("out")) throw tg::UsageError("--out CKPT.h5 is required (the checkpoint to write)");
  const std::string path = get<std::string>(r, "safetensors");
  const std::string out = get<std::string>(r, "out");
  std::error_code ec;
  if (std::filesystem::is_directory(out, ec))
    throw tg::UsageError("--out " + out + " is a directory; give the checkpoint file to write, e.g. " + out +
                         "/gpt2.h5");
  if (!r.count("overwrite") && std::filesystem::exists(out, ec))
    throw tg::UsageError("--out " + out + " already exists; choose another path or pass --overwrite to replace it");

  std::string config_text;
  if (r.count("config")) {
    const std::string config_path = get<std::string>(r, "config");
    config_text = data::file_read(config_path, "config file", kMaxConfigBytes);
    if (config_text.empty()) throw tg::DataError("config file " + config_path + " is empty");
  }

  checkpoints::HfGpt2 model;
  std::string dtypes;
  try {
    const checkpoints::MappedFile file(path);
    const checkpoints::Safetensors st = checkpoints::safetensors_parse(file.data(), file.size());
    model = checkpoints::hf_gpt2_import(st, config_text);
    dtypes = dtypes_used(st);
  } catch (const tg::DataError& e) {
    throw tg::DataError(path + ": " + e.what());
  }
  const nn::GPTConfig& c = model.config;
  const data::TokenizerSpec& tokenizer = data::gpt2_spec();
  if (c.vocab_size < static_cast<int64_t>(tokenizer.tokens.size()))
    throw tg::DataError(path + ": vocab_size " + std::to_string(c.vocab_size) +
                        " is smaller than GPT-2's tokenizer (" + std::to_string(tokenizer.tokens.size()) +
                        " tokens); tapegpt imports GPT-2 models, which use that tokenizer");
  for (const std::string& note : model.notes) std::printf("note: %s\n", note.c_str());

  checkpoints::Checkpoint meta;
  meta.config = c;
  meta.train.best_val_loss = std::numeric_limits<double>::infinity();
  meta.tokenizer = tokenizer;
  checkpoints::save_checkpoint(out, meta, model.store, /*with_optimizer=*/false);

  int64_t n = 0;
  for (const nn::ParamInfo& p : model.store.table) n += p.numel;
  std::printf("imported %s parameters (%lld layers, %lld heads, %lld wide, context %lld, vocab %lld, %s) "
              "from %s weights into %s\n",
              grouped(n).c_str(), static_cast<long long>(c.n_layer), static_cast<long long>(c.n_head),
              static_cast<long long>(c.n_embd), static_cast<long long>(c.block_size),
              static_cast<long long>(c.vocab_size), c.tied ? "tied head" : "untied head", dtypes.c_str(),
              out.c_str());
  return 0;
}

}  // namespace cli
