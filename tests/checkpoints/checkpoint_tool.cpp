// A helper for the converter round-trip test: writes a known checkpoint and
// compares two checkpoints through load_checkpoint (the C++ side of the loop).
//   checkpoint_tool write PATH
//   checkpoint_tool compare A B [--model-only]
#include <cstdio>
#include <cstring>
#include <string>

#include "autograd/base/errors.h"
#include "tests/checkpoints/fixtures.h"

using namespace checkpoints_test;

namespace {

int write(const std::string& path) {
  nn::GPTConfig config = tiny_checkpoint_config();
  config.vocab_size = 300;  // room for the 256-token byte tokenizer too
  checkpoints::Checkpoint meta = full_meta(config);
  meta.tokenizer.type = "bpe";
  meta.tokenizer.merges = {{1, 2}, {0, 299}};
  checkpoints::save_checkpoint(path, meta, filled_store(config, 42));
  return 0;
}

int compare(const std::string& a_path, const std::string& b_path, bool model_only) {
  checkpoints::Loaded a = checkpoints::load_checkpoint(a_path, false);
  checkpoints::Loaded b = checkpoints::load_checkpoint(b_path, false);
  const nn::GPTConfig &x = a.meta.config, &y = b.meta.config;
  if (x.vocab_size != y.vocab_size || x.block_size != y.block_size || x.n_layer != y.n_layer ||
      x.n_head != y.n_head || x.n_embd != y.n_embd || x.bias != y.bias || x.tied != y.tied ||
      x.dropout != y.dropout) {
    std::fprintf(stderr, "compare: configs differ\n");
    return 1;
  }
  for (const nn::ModelChoice& row : nn::model_choices())  // pos_encoding, gelu, norm, mlp
    if (row.get(x) != row.get(y)) {
      std::fprintf(stderr, "compare: configs differ in %s\n", row.key);
      return 1;
    }
  if (!same_bits(a.store, b.store, Buffer::Params)) {
    std::fprintf(stderr, "compare: parameters differ\n");
    return 1;
  }
  if (!model_only && (a.meta.tokenizer.type != b.meta.tokenizer.type ||
                      a.meta.tokenizer.tokens != b.meta.tokenizer.tokens ||
                      a.meta.tokenizer.merges != b.meta.tokenizer.merges)) {
    std::fprintf(stderr, "compare: tokenizers differ\n");
    return 1;
  }
  std::printf("compare: %s and %s match\n", a_path.c_str(), b_path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 3 && std::strcmp(argv[1], "write") == 0) return write(argv[2]);
    if ((argc == 4 || argc == 5) && std::strcmp(argv[1], "compare") == 0)
      return compare(argv[2], argv[3], argc == 5 && std::strcmp(argv[4], "--model-only") == 0);
  } catch (const tg::DataError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: checkpoint_tool write PATH | compare A B [--model-only]\n");
  return 2;
}
