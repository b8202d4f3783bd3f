// train/cli/: the tapegpt command line, namespace cli — its own CMake target
// (library tapegpt_cli, binary tapegpt from main.cpp). One cmd_NAME.cpp per
// subcommand; the contract every command follows in cli_util.h; --ckpt and
// model loading in load_model.h; where the picture commands write in
// output_files.h; `train --init-from` in init_from.h. The training flags
// themselves are declared once in train/train_flags.h (Note [Training
// flags]); commands call into train/, train/viz/, data/ and checkpoints/.
//
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
int cmd_export(int argc, char** argv);

}  // namespace cli
