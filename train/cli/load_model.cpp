// --ckpt → model + tokenizer (see load_model.h).
#include "train/cli/load_model.h"

#include <variant>

#include "autograd/base/errors.h"
#include "checkpoints/checkpoint.h"
#include "train/cli/cli_util.h"

namespace cli {

std::string required_ckpt(const cxxopts::ParseResult& r) {
  if (!r.count("ckpt")) throw tg::UsageError("--ckpt CKPT is required");
  return get<std::string>(r, "ckpt");
}

LoadedModel load_model(const std::string& path) {
  checkpoints::Loaded ck = checkpoints::load_checkpoint(path, false);
  std::string trained;  // absent from files older than --precision: float32
  for (const checkpoints::Flag& f : ck.meta.train.flags)
    if (f.name == "precision" && std::holds_alternative<std::string>(f.value)) trained = std::get<std::string>(f.value);
  // The loaded store becomes the model's: no second copy of the buffers.
  return LoadedModel{nn::gpt_create(ck.meta.config, std::move(ck.store)), data::make_tokenizer(ck.meta.tokenizer),
                     ck.meta.train.step, train::precision_of_saved(trained)};
}

void add_precision_option(cxxopts::Options& options, const std::string& auto_means) {
  options.add_options()("precision",
                        "fp32 | bf16 | auto: the matmuls in float32, or with bf16 operands and float32 sums; auto " +
                            auto_means,
                        cxxopts::value<std::string>()->default_value("auto"));
}

train::PrecisionChoice apply_precision(const cxxopts::ParseResult& r, LoadedModel& lm) {
  const train::PrecisionChoice c = train::precision_for_checkpoint(get<std::string>(r, "precision"), lm.trained);
  nn::set_precision(lm.model.store, c.precision);
  return c;
}

}  // namespace cli
