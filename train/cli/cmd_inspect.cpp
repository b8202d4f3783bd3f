// `tapegpt inspect CKPT`: what a checkpoint holds, without h5py, and whether
// every dataset still matches its checksum.
#include <cmath>
#include <cstdio>
#include <variant>

#include "checkpoints/checkpoint.h"
#include "train/cli/cli_util.h"
#include "train/cli/commands.h"

namespace cli {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string flag_text(const checkpoints::Flag& f) {
  if (const auto* i = std::get_if<int64_t>(&f.value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&f.value)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", *d);
    return buf;
  }
  return std::get<std::string>(f.value);
}

void print_header(const std::string& path, const checkpoints::Inspection& in) {
  const checkpoints::Checkpoint& m = in.meta;
  const nn::GPTConfig& c = m.config;
  std::printf("checkpoint %s\n", path.c_str());
  std::printf("  format_version  %lld (%s)\n", static_cast<long long>(in.format_version),
              in.format_version >= 2 ? "Fletcher32 checksum on every dataset" : "no dataset checksums");
  std::printf("  config          vocab_size %lld, block_size %lld, n_layer %lld, n_head %lld, n_embd %lld,\n"
              "                  bias %s, tied %s, dropout %g",
              static_cast<long long>(c.vocab_size), static_cast<long long>(c.block_size),
              static_cast<long long>(c.n_layer), static_cast<long long>(c.n_head),
              static_cast<long long>(c.n_embd), c.bias ? "yes" : "no", c.tied ? "yes" : "no",
              static_cast<double>(c.dropout));
  for (const nn::ModelChoice& row : nn::model_choices()) std::printf(", %s %s", row.key, nn::choice_name(row, c));
  std::printf("\n");
  std::printf("  step            %lld\n", static_cast<long long>(m.train.step));
  std::printf("  tokens seen     %lld\n", static_cast<long long>(m.train.tokens_seen));
  if (m.train.train_seconds > 0) std::printf("  training time   %.1f s (steps only)\n", m.train.train_seconds);
  if (std::isfinite(m.train.best_val_loss)) std::printf("  best val loss   %.6f\n", m.train.best_val_loss);
  else std::printf("  best val loss   none (never evaluated)\n");
  std::printf("  run             %s (saved by a run writing to %s)\n",
              m.train.run_id.empty() ? "(no run id: written before format_version 2)" : m.train.run_id.c_str(),
              m.train.run_dir.c_str());
  std::printf("  tokenizer       %s%s, %lld tokens, %lld merges\n", m.tokenizer.type.c_str(),
              m.tokenizer.split.empty() ? "" : (" (" + m.tokenizer.split + " split)").c_str(),
              static_cast<long long>(in.n_tokens), static_cast<long long>(in.n_merges));
  // Note [Muon] in train/optimizer.h: a Muon run's m holds Muon's momentum
  // for the blocks' matrices (their v stays zero) and AdamW's for the rest.
  const bool muon = m.optimizer.name == "muon";
  if (!in.has_moments) std::printf("  optimizer       %s, no moments (model only)\n", m.optimizer.name.c_str());
  else if (muon) std::printf("  optimizer       muon: Muon momentum (blocks' matrices, in m) and AdamW moments (the rest) saved (resumable)\n");
  else std::printf("  optimizer       %s: AdamW moments saved (resumable)\n", m.optimizer.name.c_str());
  if (!m.train.flags.empty()) {
    std::printf("  flags          ");
    for (const checkpoints::Flag& f : m.train.flags) std::printf(" %s=%s", f.name.c_str(), flag_text(f).c_str());
    std::printf("\n");
  }
}

}  // namespace

int cmd_inspect(int argc, char** argv) {
  cxxopts::Options opts("tapegpt inspect",
                        "What a checkpoint holds: format version, config, step, tokens seen, best\n"
                        "validation loss, tokenizer, and every tensor's shape, dtype and norm, each\n"
                        "read and checked against its checksum. Exits 1 if any dataset fails.\n"
                        "  tapegpt inspect CKPT");
  opts.add_options()
      ("ckpt", "checkpoint to inspect (or the first argument)", cxxopts::value<std::string>());
  add_common_options(opts);
  opts.parse_positional({"ckpt"});
  opts.positional_help("CKPT");
  cxxopts::ParseResult r;
  if (!parse_or_help(opts, argc, argv, &r)) return 0;
  if (!r.count("ckpt")) throw tg::UsageError("give the checkpoint to inspect: tapegpt inspect CKPT");
  const std::string path = get<std::string>(r, "ckpt");
  const checkpoints::Inspection in = checkpoints::inspect_checkpoint(path);
  print_header(path, in);

  std::printf("\n  %-52s %-16s %-8s %14s  %s\n", "dataset", "shape", "dtype", "norm", "checksum");
  std::vector<const checkpoints::DatasetReport*> failed;
  for (const checkpoints::DatasetReport& d : in.datasets) {
    bool empty = false;
    for (int64_t n : d.shape) empty = empty || n == 0;
    const char* status = !d.error.empty() ? "FAILED" : d.checksummed ? "ok" : empty ? "empty" : "none";
    if (d.error.empty()) {
      std::printf("  %-52s %-16s %-8s %14.6g  %s\n", d.path.c_str(), shape_text(d.shape).c_str(),
                  d.dtype.c_str(), d.norm, status);
    } else {
      std::printf("  %-52s %-16s %-8s %14s  %s\n", d.path.c_str(), shape_text(d.shape).c_str(),
                  d.dtype.c_str(), "-", status);
      failed.push_back(&d);
    }
  }
  std::fflush(stdout);
  if (!failed.empty()) {
    std::string msg = "checkpoint " + path + ": " + failed[0]->error;
    if (failed.size() > 1) msg += " (and " + std::to_string(failed.size() - 1) + " more datasets failed; see the table)";
    throw tg::DataError(msg);
  }
  std::printf("\nall %zu datasets read%s\n", in.datasets.size(),
              in.format_version >= 2 ? " and match their checksums" : " (no checksums to verify)");
  return 0;
}

}  // namespace cli
