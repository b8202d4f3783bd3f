// tapegpt: one binary, one subcommand per job. Every user mistake ends as a
// single "tapegpt CMD: error: ..." line and exit code 2 (usage) or 1 (data).
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "autograd/base/errors.h"
#include "autograd/kernels/blas_setup.h"
#include "train/cli/commands.h"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

const Command kCommands[] = {
    {"prepare", cli::cmd_prepare, "tokenize a text corpus into train.bin, val.bin and a tokenizer"},
    {"train", cli::cmd_train, "train a GPT (or --resume a run) and write HDF5 checkpoints"},
    {"eval", cli::cmd_eval, "loss, perplexity and bits per byte of a checkpoint on a text"},
    {"sample", cli::cmd_sample, "generate text from a checkpoint (KV cache)"},
    {"tokenize", cli::cmd_tokenize, "print the token ids of a text, or decode ids"},
    {"params", cli::cmd_params, "parameter table of a model, checkpoint or preset"},
    {"inspect", cli::cmd_inspect, "what a checkpoint holds, and whether its checksums verify"},
    {"import", cli::cmd_import, "import a Hugging Face GPT-2 (model.safetensors) as a checkpoint"},
    {"export", cli::cmd_export, "a checkpoint as GGUF (llama.cpp, ollama) or a Hugging Face directory"},
    {"bench", cli::cmd_bench, "training and sampling speed, memory and a time profile"},
    {"attention", cli::cmd_attention, "a page showing every attention head for a prompt"},
    {"embed", cli::cmd_embed, "nearest tokens, analogies and position similarity of embeddings"},
    {"plot", cli::cmd_plot, "training/validation loss and learning rate of runs as an SVG"},
};

void print_usage(std::FILE* out) {
  std::fputs("tapegpt: train small GPT language models on the CPU.\n\nUsage: tapegpt COMMAND [options]\n\nCommands:\n", out);
  for (const Command& c : kCommands) std::fprintf(out, "  %-9s %s\n", c.name, c.summary);
  std::fputs("\nRun 'tapegpt COMMAND --help' for a command's options.\n", out);
}

}  // namespace

int main(int argc, char** argv) {
  kernels::select_blas_kernels(argv);
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    print_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string name = argv[1];
  for (const Command& c : kCommands) {
    if (name != c.name) continue;
    // On a terminal, first erase a progress line the command may have left.
    const char* clear = isatty(STDERR_FILENO) ? "\r\033[K" : "";
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const tg::UsageError& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "%stapegpt %s: error: %s\n", clear, c.name, e.what());
      return 2;
    } catch (const tg::DataError& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "%stapegpt %s: error: %s\n", clear, c.name, e.what());
      return 1;
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "%stapegpt %s: error: out of memory; use a smaller model or batch\n", clear, c.name);
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%stapegpt %s: error: %s\n", clear, c.name, e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "tapegpt: error: unknown command '%s'; run 'tapegpt --help' for the list\n", name.c_str());
  return 2;
}
