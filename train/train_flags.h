// Note [Training flags]: every flag of `tapegpt train`, declared once, in
// the order --help lists them (the model choices, --norm, --pos-encoding,
// --mlp and --gelu, come from nn::model_choices(), Note [Model choices]). A
// row says how the command line spells and
// documents the flag, which TrainOptions field it sets, whether a resumed
// run may change it, and whether (and where) the checkpoint saves it in
// /train/flags. The command line (train/cli/cmd_train.cpp) builds its
// options, its parsing and its resume rule from the rows; the checkpoint
// conversions below walk the same rows.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "checkpoints/checkpoint.h"
#include "train/options.h"
#include "train/presets.h"

namespace train {

using FlagValue = decltype(checkpoints::Flag::value);  // int64_t, double or string

enum class FlagType {
  Int,     // int64_t
  UInt,    // uint64_t on the command line, its bits as int64_t when saved
  Real,    // double
  Text,    // string
  Switch,  // present or not: int64_t 1 or 0
};

// What a resumed run does with a flag given beside --resume.
enum class Resume {
  Refused,  // the run keeps the value saved in its checkpoint
  Changes,  // the flag changes it (--max-steps, --lr, --eval-interval, ...)
  Restates, // only the saved value may be given (--optimizer; --precision unless --change-precision)
};

struct TrainFlag {
  std::string name;          // on the command line, without "--"; "" when it has none
  std::string group;         // its heading in --help: "run", "model" or "optimisation"
  std::string help;
  FlagType type;
  std::string default_text;  // shown by --help and used when absent; "" when it has none
  Resume resume;             // whether --resume takes it
  int saved_slot;            // its position in /train/flags; -1 when not saved there
  std::string saved_as;      // its name there
  // Null for flags the command handles itself (--out, --resume, --overwrite, ...).
  // Throws tg::UsageError for a value the field cannot take.
  // (A std::function: the model-choice rows capture their nn::ModelChoice.)
  std::function<void(TrainOptions& o, const FlagValue& v)> set;
  std::function<FlagValue(const TrainOptions& o)> get;  // null when not saved
};

const std::vector<TrainFlag>& train_flags();

// Null when no row has that command-line name.
const TrainFlag* find_train_flag(const std::string& name);

// Sets the row's field from a value written as on the command line (a
// switch: "", on). Throws tg::UsageError naming the flag when the text is
// not a value of its type or the field cannot take it.
void set_flag_from_text(const TrainFlag& flag, const std::string& text, TrainOptions* o);

// A recipe (train/presets.h) onto `o`: every flag it names for which
// `given(name)` is false (the command line's own values win). Sets
// o->preset to its name.
void apply_train_preset(const TrainPreset& preset, const std::function<bool(const std::string&)>& given,
                        TrainOptions* o);

// The options a new run starts from before its flags: the demo's recipe
// (scripts/demo.sh), about five minutes on 2 cores for a validation loss
// near 1.65 nats/char on Tiny Shakespeare (BENCHMARKS.md).
const TrainOptions& default_options();

// --lr's default under --optimizer muon (Note [Muon]): Muon's peak learning
// rate, where AdamW's is default_options().schedule.lr.
constexpr double kDefaultMuonLr = 0.02;

// Note [Derived defaults]: the flags whose default follows another's, for
// every command that makes a run's options (the command line, the --budget
// planner), once the flags they follow are final: --min-lr is --lr/10,
// --lr-decay-steps is --max-steps, and --warmup yields to a shorter decay
// (two explicit flags that contradict each other are refused, with a
// tg::UsageError). `given(flag)` says which the user (or a --preset) set.
void apply_derived_defaults(const std::function<bool(const std::string&)>& given, TrainOptions* o);

// To and from the checkpoint's flag list (model shape lives in /config).
std::vector<checkpoints::Flag> options_to_flags(const TrainOptions& o);
// Overwrites the fields named in `flags`; throws tg::DataError on a flag of
// the wrong type (a damaged or foreign checkpoint).
void options_from_flags(const std::vector<checkpoints::Flag>& flags, TrainOptions* o);

}  // namespace train
