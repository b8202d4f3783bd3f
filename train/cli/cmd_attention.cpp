// `tapegpt attention`: runs a prompt through a checkpoint's model (the
// untaped forward, the training kernels) keeping every layer's attention
// probabilities, and writes them as attention.json, index.html and SVGs.
#include <cstdio>
#include <string>
#include <vector>

#include "autograd/arena.h"
#include "autograd/ops.h"
#include "autograd/base/atomic_file.h"
#include "train/cli/cli_util.h"
#include "train/cli/commands.h"
#include "train/cli/load_model.h"
#include "train/cli/output_files.h"
#include "train/viz/attention_report.h"

namespace cli {

int cmd_attention(int argc, char** argv) {
  cxxopts::Options opts("tapegpt attention",
                        "Show the attention of every head of every layer for a prompt: writes\n"
                        "DIR/attention.json (the probabilities), DIR/index.html (a self-contained page)\n"
                        "and DIR/layer-L-head-H.svg for --layer L --head H (numbered from 0).\n"
                        "  tapegpt attention --ckpt CKPT --prompt TEXT --out DIR [--layer L --head H]");
  opts.add_options()
      ("ckpt", "checkpoint whose model to run", cxxopts::value<std::string>())
      ("prompt", "the text to look at (at most block_size tokens)", cxxopts::value<std::string>())
      ("out", "directory to write into (created if needed)", cxxopts::value<std::string>())
      ("layer", "layer of the head to also draw as an SVG", cxxopts::value<int64_t>())
      ("head", "head (within --layer) to draw as an SVG", cxxopts::value<int64_t>())
      ("overwrite", "replace files an earlier run left in --out");
  add_precision_option(opts);
  add_common_options(opts);
  cxxopts::ParseResult r;
  if (!parse_or_help(opts, argc, argv, &r)) return 0;
  const std::string ckpt = required_ckpt(r);
  if (!r.count("prompt") || get<std::string>(r, "prompt").empty())
    throw tg::UsageError("--prompt TEXT is required and must not be empty");
  if (!r.count("out") || get<std::string>(r, "out").empty()) throw tg::UsageError("--out DIR is required");
  if (r.count("layer") != r.count("head"))
    throw tg::UsageError("give --layer and --head together (the head to draw as an SVG)");

  LoadedModel lm = load_model(ckpt);
  apply_precision(r, lm);
  const nn::GPTConfig& c = lm.model.config;
  const bool svg = r.count("layer") > 0;
  const int64_t layer = svg ? get<int64_t>(r, "layer") : 0, head = svg ? get<int64_t>(r, "head") : 0;
  if (svg && (layer < 0 || layer >= c.n_layer))
    throw tg::UsageError("--layer must be between 0 and " + std::to_string(c.n_layer - 1) +
                         " (the model has " + std::to_string(c.n_layer) + " layers)");
  if (svg && (head < 0 || head >= c.n_head))
    throw tg::UsageError("--head must be between 0 and " + std::to_string(c.n_head - 1) +
                         " (the model has " + std::to_string(c.n_head) + " heads per layer)");

  std::vector<int32_t> ids;
  try {
    ids = lm.tokenizer.encode(get<std::string>(r, "prompt"));
  } catch (const tg::DataError& e) {
    throw tg::UsageError(std::string("--prompt cannot be encoded by this checkpoint's tokenizer: ") + e.what());
  }
  const int64_t T = static_cast<int64_t>(ids.size());
  if (T < 1) throw tg::UsageError("--prompt encodes to no tokens; give some text");
  if (T > c.block_size)
    throw tg::UsageError("--prompt is " + std::to_string(T) + " tokens but the model's context is " +
                         std::to_string(c.block_size) + "; shorten it");

  const std::string dir = get<std::string>(r, "out");
  const std::string json_path = dir + "/attention.json", html_path = dir + "/index.html";
  const std::string svg_path =
      dir + "/layer-" + std::to_string(layer) + "-head-" + std::to_string(head) + ".svg";
  std::vector<std::string> outputs = {json_path, html_path};
  if (svg) outputs.push_back(svg_path);
  refuse_existing(outputs, r.count("overwrite") > 0);
  make_output_dir(dir, "--out");

  viz::AttentionMaps maps;
  maps.n_layer = c.n_layer;
  maps.n_head = c.n_head;
  maps.T = T;
  maps.token_ids = ids;
  for (int32_t id : ids) maps.tokens.push_back(lm.tokenizer.token_bytes(id));
  maps.title = ckpt;
  // One sequence (B = 1), so the [n_layer, B, n_head, T, T] probabilities
  // the forward fills are exactly the maps' [n_layer, n_head, T, T].
  maps.probs.resize(static_cast<size_t>(c.n_layer * c.n_head * T * T));
  autograd::Arena arena;
  autograd::OpContext ctx{&arena, nullptr, nn::run_precision(lm.model.store)};
  nn::gpt_forward(ctx, lm.model, ids.data(), 1, T, 0, maps.probs.data());

  tg::atomic_write_file(json_path, viz::attention_json(maps));
  tg::atomic_write_file(html_path, viz::attention_html(maps));
  if (svg) tg::atomic_write_file(svg_path, viz::attention_head_svg(maps, layer, head));
  std::printf("%lld tokens, %lld layers x %lld heads\nwrote %s\nwrote %s\n", static_cast<long long>(T),
              static_cast<long long>(c.n_layer), static_cast<long long>(c.n_head), json_path.c_str(),
              html_path.c_str());
  if (svg) std::printf("wrote %s\n", svg_path.c_str());
  std::printf("open %s in a browser to see every head\n", html_path.c_str());
  return 0;
}

}  // namespace cli
