// train --init-from: fine-tuning a checkpoint's weights as a new run (see
// init_from.h).
#include "train/cli/init_from.h"

#include <cstdio>
#include <cstring>

#include "autograd/base/check.h"
#include "autograd/base/errors.h"
#include "autograd/base/rng.h"
#include "checkpoints/checkpoint.h"
#include "data/tokenizer_json.h"
#include "nn/gpt.h"
#include "train/cli/cli_util.h"
#include "train/precision.h"
#include "train/run_dir.h"
#include "train/trainer.h"

namespace cli {

namespace {

std::string contradiction(const std::string& flag, const std::string& given, const std::string& path,
                          const std::string& has) {
  return "--" + flag + (given.empty() ? "" : " " + given) + " contradicts " + path + ", which has " + has +
         ": with --init-from the model's shape comes from the checkpoint; remove the flag";
}

// Shape flags given explicitly must match the checkpoint; --block-size may
// shrink the context (nanoGPT's crop_block_size); --dropout is free.
nn::GPTConfig fine_tune_config(const cxxopts::ParseResult& r, const train::TrainOptions& o,
                               const nn::GPTConfig& ck, const std::string& path) {
  auto check_int = [&](const char* flag, int64_t given, int64_t has, const char* what) {
    if (r.count(flag) && given != has)
      throw tg::UsageError(contradiction(flag, std::to_string(given), path, std::to_string(has) + " " + what));
  };
  check_int("n-layer", o.model.n_layer, ck.n_layer, "layers");
  check_int("n-head", o.model.n_head, ck.n_head, "heads");
  check_int("n-embd", o.model.n_embd, ck.n_embd, "as n_embd");
  if (r.count("no-bias") && ck.bias)
    throw tg::UsageError(contradiction("no-bias", "", path, "biases"));
  if (r.count("untied") && ck.tied)
    throw tg::UsageError(contradiction("untied", "", path, "a tied lm_head"));
  for (const nn::ModelChoice& row : nn::model_choices())  // --norm, --pos-encoding, --mlp, --gelu
    if (r.count(row.flag) && row.get(o.model) != row.get(ck))
      throw tg::UsageError(contradiction(row.flag, nn::choice_name(row, o.model), path,
                                         std::string(row.key) + " " + nn::choice_name(row, ck)));
  nn::GPTConfig c = ck;
  if (r.count("block-size")) {
    if (o.model.block_size > ck.block_size && ck.pos_encoding == nn::PosEncoding::Learned)
      throw tg::UsageError("--block-size " + std::to_string(o.model.block_size) + " is larger than the " +
                           std::to_string(ck.block_size) + " positions " + path +
                           " has learned; use at most " + std::to_string(ck.block_size));
    c.block_size = o.model.block_size;
  }
  c.dropout = o.model.dropout;
  return c;
}

// The data must be tokenized exactly as the checkpoint's embedding expects.
void check_tokenizer(const data::TokenizerSpec& data_spec, const data::TokenizerSpec& ck_spec,
                     const std::string& data_dir, const std::string& path) {
  if (data_spec.type == ck_spec.type && data_spec.tokens == ck_spec.tokens && data_spec.merges == ck_spec.merges &&
      data_spec.split == ck_spec.split)
    return;
  std::string fix = "prepare the data with the checkpoint's tokenizer";
  if (ck_spec.type == "gpt2") fix = "prepare the data with --tokenizer gpt2";
  else if (ck_spec.type == "byte") fix = "prepare the data with --tokenizer byte";
  throw tg::UsageError("the data in " + data_dir + " was prepared with a " + data_spec.type + " tokenizer of " +
                       std::to_string(data_spec.tokens.size()) + " tokens, but " + path + " uses a " +
                       ck_spec.type + " tokenizer of " + std::to_string(ck_spec.tokens.size()) +
                       (data_spec.type == ck_spec.type && data_spec.tokens.size() == ck_spec.tokens.size()
                            ? (data_spec.tokens == ck_spec.tokens ? " with another --bpe-split" : " with other tokens")
                            : "") +
                       ": " + fix);
}

}  // namespace

int init_from_run(const cxxopts::ParseResult& r, train::TrainOptions o, train::Distributed& dist) {
  const std::string path = get<std::string>(r, "init-from");
  if (r.count("resume"))
    throw tg::UsageError("--init-from starts a new run and --resume continues one: give only one of them");
  if (!r.count("overwrite") && train::holds_run(o.out_dir))
    throw tg::UsageError(o.out_dir + " already holds a run (ckpt.h5): choose another --out, or pass "
                         "--overwrite to start over");
  if (r.count("zero-init-proj"))
    throw tg::UsageError("--zero-init-proj chooses a fresh initialisation, but --init-from starts from " + path +
                         "'s weights: remove one of them");
  if (r.count("preset"))
    throw tg::UsageError("--preset sets a model's shape, but with --init-from the shape comes from " + path +
                         ": give the recipe's optimisation flags yourself instead");
  o.replace_run = true;  // a new run: fresh metrics.jsonl, no files of an old one
  checkpoints::Loaded ck = checkpoints::load_checkpoint(path, false);
  o.model = fine_tune_config(r, o, ck.meta.config, path);
  const data::Tokenizer tokenizer = data::load_tokenizer_dir(o.data_dir);
  check_tokenizer(tokenizer.spec(), ck.meta.tokenizer, o.data_dir, path);
  const std::string err = train::options_error(o);
  if (!err.empty()) throw tg::UsageError(err);
  if (r.count("change-precision"))
    throw tg::UsageError("--change-precision is for --resume; a new run takes --precision alone");
  set_threads(o.threads);  // before auto's measurement, which runs on the run's threads
  if (!o.budget.empty() &&
      !plan_budget_for_job(r, o.budget_fit == "all" ? train::BudgetFit::FineTune : train::BudgetFit::Steps, dist, &o))
    return 1;
  train::resolve_precision(&o);

  nn::GPT model;
  if (o.model.block_size == ck.meta.config.block_size) {
    // Gradients and moments are zero (not loaded): a fresh optimizer.
    model = nn::gpt_create(o.model, std::move(ck.store));
  } else {
    ck.store.grads.resize(0);  // only the weights are copied: free the rest first
    ck.store.m.resize(0);
    ck.store.v.resize(0);
    model = nn::gpt_create(o.model);
    // A shorter context keeps the first block_size rows of wpe (row-major
    // [T, C]: a prefix of the buffer); every other tensor copies whole.
    for (const nn::ParamInfo& p : model.store.table) {
      const nn::ParamInfo* src = ck.store.find(p.name);
      TG_CHECK(src != nullptr && src->numel >= p.numel);
      std::memcpy(model.store.values.floats() + p.offset, ck.store.values.floats() + src->offset,
                  static_cast<size_t>(p.numel) * sizeof(float));
    }
    std::printf("context cropped from %lld to %lld positions\n",
                static_cast<long long>(ck.meta.config.block_size), static_cast<long long>(o.model.block_size));
  }
  ck.store = nn::ParameterStore{};
  std::printf("initialised from %s (its step %lld); new run: step 0, fresh AdamW state and sampler\n",
              path.c_str(), static_cast<long long>(ck.meta.train.step));

  o.seconds_before_loop = command_seconds();
  return train::run_training(o, model, ck.meta.tokenizer, train::new_run_state(o.seed), false, false, dist);
}

}  // namespace cli
