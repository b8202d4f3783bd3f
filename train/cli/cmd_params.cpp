// `tapegpt params`: parameter tables of a checkpoint, a model shape or a preset.
#include <cstdio>

#include "checkpoints/checkpoint.h"
#include "train/cli/cli_util.h"
#include "train/cli/commands.h"
#include "train/params_report.h"
#include "train/presets.h"

namespace cli {

namespace {

// Display width of a UTF-8 string (the tables use "×").
int width(const std::string& s) {
  int w = 0;
  for (unsigned char ch : s) w += (ch & 0xC0) != 0x80;
  return w;
}

void print_table(const char* title, const std::vector<train::ParamsReportRow>& rows) {
  std::printf("%s\n", title);
  std::printf("  %-40s %9s  %-14s %18s\n", "kind", "matrices", "shape (each)", "parameters");
  int64_t total = 0, matrices = 0;
  for (const train::ParamsReportRow& r : rows) {
    std::printf("  %s%*s %9s  %s%*s %18s\n", r.kind.c_str(), 40 - width(r.kind), "",
                grouped(r.matrices).c_str(), r.shape.c_str(), 14 - width(r.shape), "",
                grouped(r.parameters).c_str());
    total += r.parameters;
    matrices += r.matrices;
  }
  std::printf("  %-40s %9s  %-14s %18s\n\n", "total", grouped(matrices).c_str(), "", grouped(total).c_str());
}

}  // namespace

int cmd_params(int argc, char** argv) {
  cxxopts::Options opts("tapegpt params",
                        "Parameter counts by matrix kind, for a checkpoint, a model shape or a preset.\n"
                        "  tapegpt params --ckpt CKPT | --preset NAME | [--n-layer ... --vocab-size V]");
  opts.add_options()
      ("ckpt", "read the model shape from a checkpoint", cxxopts::value<std::string>())
      ("preset", "demo, gpt2-small, gpt2-medium, gpt2-large, gpt2-xl, gpt3-175b", cxxopts::value<std::string>())
      ("vocab-size", "vocabulary size", cxxopts::value<int64_t>())
      ("n-layer", "transformer blocks", cxxopts::value<int64_t>())
      ("n-head", "attention heads", cxxopts::value<int64_t>())
      ("n-embd", "embedding width", cxxopts::value<int64_t>())
      ("block-size", "context length", cxxopts::value<int64_t>())
      ("no-bias", "no biases")
      ("untied", "separate lm_head");
  for (const nn::ModelChoice& row : nn::model_choices()) {  // --norm, --pos-encoding, --mlp, --gelu, --qk-norm, …
    if (row.is_switch) opts.add_options()(row.flag, row.help);
    else opts.add_options()(row.flag, nn::choice_alternatives(row), cxxopts::value<std::string>());
  }
  add_common_options(opts);
  cxxopts::ParseResult r;
  if (!parse_or_help(opts, argc, argv, &r)) return 0;
  if (r.count("ckpt") + r.count("preset") > 1) throw tg::UsageError("give only one of --ckpt and --preset");
  nn::GPTConfig c = train::demo_config();
  std::string source = "model flags (defaults: the demo config)";
  if (r.count("ckpt")) {
    c = checkpoints::load_checkpoint(get<std::string>(r, "ckpt"), false).meta.config;
    source = "checkpoint " + get<std::string>(r, "ckpt");
  } else if (r.count("preset")) {
    const std::string name = get<std::string>(r, "preset");
    const train::Preset* p = train::find_preset(name);
    if (!p) throw tg::UsageError("unknown preset '" + name + "'; choose demo, gpt2-small, gpt2-medium, gpt2-large, gpt2-xl or gpt3-175b");
    c = p->config;
    source = "preset " + name;
  }
  if (r.count("vocab-size")) c.vocab_size = get<int64_t>(r, "vocab-size");
  if (r.count("n-layer")) c.n_layer = get<int64_t>(r, "n-layer");
  if (r.count("n-head")) c.n_head = get<int64_t>(r, "n-head");
  if (r.count("n-embd")) c.n_embd = get<int64_t>(r, "n-embd");
  if (r.count("block-size")) c.block_size = get<int64_t>(r, "block-size");
  if (r.count("no-bias")) c.bias = false;
  if (r.count("untied")) c.tied = false;
  for (const nn::ModelChoice& row : nn::model_choices())
    if (row.is_switch && r.count(row.flag)) row.set(c, 1);
    else if (!row.is_switch && r.count(row.flag) && !nn::choice_parse(row, get<std::string>(r, row.flag), &c))
      throw tg::UsageError("--" + std::string(row.flag) + " must be " + nn::choice_list(row) + " (got '" +
                           get<std::string>(r, row.flag) + "')");
  const std::string err = nn::config_error(c);
  if (!err.empty()) throw tg::UsageError(err);

  std::printf("%s: vocab %lld, context %lld, %lld layers, %lld heads of %lld, d_model %lld, %s, %s",
              source.c_str(), static_cast<long long>(c.vocab_size), static_cast<long long>(c.block_size),
              static_cast<long long>(c.n_layer), static_cast<long long>(c.n_head),
              static_cast<long long>(c.head_size()), static_cast<long long>(c.n_embd),
              c.tied ? "tied embedding" : "untied lm_head", c.bias ? "with biases" : "no biases");
  for (const nn::ModelChoice& row : nn::model_choices()) std::printf(", %s %s", row.key, nn::choice_name(row, c));
  std::printf("\n\n");
  print_table("Exact parameters of this model:", train::params_report_exact_rows(c));
  print_table("Weight-matrix view (weight matrices only; embedding and unembedding both counted):",
              train::params_report_weight_matrix_rows(c));
  return 0;
}

}  // namespace cli
