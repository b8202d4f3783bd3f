// `tapegpt embed`: what a checkpoint's embeddings learned — cosine nearest
// neighbours of a token, word analogies E(B) - E(A) + E(C), and the cosine
// similarity of the position embeddings as an SVG.
#include <cstdio>
#include <string>
#include <vector>

#include "autograd/base/atomic_file.h"
#include "train/cli_util.h"
#include "train/commands.h"
#include "train/embed.h"
#include "train/load_model.h"
#include "train/output_files.h"
#include "train/svg.h"

namespace cli {

namespace {

std::string quoted(const std::string& bytes) { return "'" + viz::visible_token(bytes) + "'"; }

// The one token `word` encodes to, or a UsageError saying what it encodes to.
int32_t single_token(const data::Tokenizer& tok, const std::string& word, const std::string& flag) {
  std::vector<int32_t> ids;
  try {
    ids = tok.encode(word);
  } catch (const tg::DataError& e) {
    throw tg::UsageError(flag + " " + quoted(word) + " cannot be encoded by this checkpoint's tokenizer: " + e.what());
  }
  if (ids.size() == 1) return ids[0];
  std::string parts;
  for (size_t i = 0; i < ids.size() && i < 8; ++i) parts += (i ? " " : "") + quoted(tok.token_bytes(ids[i]));
  if (ids.size() > 8) parts += " ...";
  throw tg::UsageError(flag + " " + quoted(word) + " is " + std::to_string(ids.size()) +
                       " tokens (" + (ids.empty() ? std::string("none") : parts) +
                       ") in this checkpoint's tokenizer, not one; give a single token "
                       "('tapegpt tokenize --ckpt CKPT TEXT' shows how text splits)");
}

void print_neighbours(const std::vector<viz::Neighbour>& ns, const data::Tokenizer& tok) {
  for (size_t i = 0; i < ns.size(); ++i)
    std::printf("%4zu  %-16s id %-6d cosine %.4f\n", i + 1, quoted(tok.token_bytes(ns[i].id)).c_str(),
                ns[i].id, ns[i].cosine);
}

}  // namespace

int cmd_embed(int argc, char** argv) {
  cxxopts::Options opts("tapegpt embed",
                        "Look at a checkpoint's embeddings: the tokens whose embedding (wte) is nearest\n"
                        "by cosine to a token's, or to E(B) - E(A) + E(C); and --positions, the cosine\n"
                        "similarity between position embeddings (learned or sinusoidal) as an SVG.\n"
                        "  tapegpt embed --ckpt CKPT (--nearest TOKEN | --analogy A B C) [--k 10]\n"
                        "                [--positions [--out FILE.svg]]");
  opts.add_options()
      ("ckpt", "checkpoint to read", cxxopts::value<std::string>())
      ("nearest", "a single token whose nearest neighbours to list", cxxopts::value<std::string>())
      ("analogy", "A B C: list the tokens nearest to E(B) - E(A) + E(C)")
      ("k", "how many neighbours (-k N or --k N)", cxxopts::value<int64_t>()->default_value("10"))
      ("positions", "write the position-embedding similarity SVG")
      ("out", "where --positions writes", cxxopts::value<std::string>()->default_value("positions.svg"))
      ("overwrite", "replace an existing --out file")
      ("words", "the analogy's A B C", cxxopts::value<std::vector<std::string>>());
  add_common_options(opts);
  opts.parse_positional({"words"});
  opts.positional_help("");
  // cxxopts spells one-letter options -k only; accept the documented --k too.
  std::vector<std::string> args(argv, argv + argc);
  std::vector<char*> argp;
  for (std::string& a : args) {
    if (a == "--k") a = "-k";
    else if (a.rfind("--k=", 0) == 0) a = "-k" + a.substr(4);
    argp.push_back(a.data());
  }
  cxxopts::ParseResult r;
  if (!parse_or_help(opts, argc, argp.data(), &r)) return 0;
  if (!r.count("ckpt")) throw tg::UsageError("--ckpt CKPT is required");
  const bool analogy = r.count("analogy") > 0, nearest = r.count("nearest") > 0;
  const bool positions = r.count("positions") > 0;
  const std::vector<std::string> words =
      r.count("words") ? get<std::vector<std::string>>(r, "words") : std::vector<std::string>{};
  if (nearest && analogy) throw tg::UsageError("give --nearest TOKEN or --analogy A B C, not both");
  if (!nearest && !analogy && !positions)
    throw tg::UsageError("say what to show: --nearest TOKEN, --analogy A B C or --positions");
  if (analogy && words.size() != 3)
    throw tg::UsageError("--analogy takes exactly three tokens A B C (got " + std::to_string(words.size()) + ")");
  if (!analogy && !words.empty())
    throw tg::UsageError("unexpected argument '" + words[0] + "'; see 'tapegpt embed --help'");
  const int64_t k = get<int64_t>(r, "k");
  if (k < 1 || k > 100000) throw tg::UsageError("--k must be between 1 and 100000");
  const std::string out = get<std::string>(r, "out");
  if (positions) {
    if (out.empty()) throw tg::UsageError("--out must name a file");
    refuse_existing({out}, r.count("overwrite") > 0);
  }

  LoadedModel lm = load_model(get<std::string>(r, "ckpt"));
  const nn::GPT& m = lm.model;
  const int64_t V = m.config.vocab_size, C = m.config.n_embd;
  const data::Tokenizer& tok = lm.tokenizer;
  auto row = [&](int32_t id) { return m.wte.data + static_cast<int64_t>(id) * C; };

  if (nearest) {
    const int32_t id = single_token(tok, get<std::string>(r, "nearest"), "--nearest");
    std::vector<double> q(row(id), row(id) + C);
    std::printf("nearest to %s (id %d) by cosine similarity of token embeddings:\n",
                quoted(tok.token_bytes(id)).c_str(), id);
    print_neighbours(viz::nearest_rows(m.wte.data, V, C, q.data(), k, {id}), tok);
  }
  if (analogy) {
    const int32_t a = single_token(tok, words[0], "--analogy"), b = single_token(tok, words[1], "--analogy"),
                  c = single_token(tok, words[2], "--analogy");
    std::vector<double> q(static_cast<size_t>(C));
    for (int64_t i = 0; i < C; ++i) q[static_cast<size_t>(i)] = double(row(b)[i]) - row(a)[i] + row(c)[i];
    std::printf("nearest to E(%s) - E(%s) + E(%s), the three excluded:\n", quoted(tok.token_bytes(b)).c_str(),
                quoted(tok.token_bytes(a)).c_str(), quoted(tok.token_bytes(c)).c_str());
    print_neighbours(viz::nearest_rows(m.wte.data, V, C, q.data(), k, {a, b, c}), tok);
  }
  if (positions) {
    const int64_t T = m.config.block_size;
    const std::string title = get<std::string>(r, "ckpt") + ": " +
                              nn::pos_encoding_name(m.config.pos_encoding) + " positions 0-" +
                              std::to_string(T - 1);
    tg::atomic_write_file(out, viz::cosine_matrix_svg(viz::cosine_matrix(m.wpe.data, T, C), T, title));
    std::printf("wrote %s\n", out.c_str());
  }
  return 0;
}

}  // namespace cli
