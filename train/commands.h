// The tapegpt subcommands. Each parses its own flags with cxxopts and returns
// the process exit code; user mistakes are thrown as tg::UsageError (exit 2)
// or tg::DataError (exit 1) and printed as one line by main.
#pragma once

namespace cli {

int cmd_prepare(int argc, char** argv);
int cmd_tokenize(int argc, char** argv);
int cmd_train(int argc, char** argv);
int cmd_eval(int argc, char** argv);
int cmd_sample(int argc, char** argv);
int cmd_params(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_attention(int argc, char** argv);
int cmd_embed(int argc, char** argv);
int cmd_plot(int argc, char** argv);
int cmd_import(int argc, char** argv);

}  // namespace cli
