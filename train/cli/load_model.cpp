// --ckpt → model + tokenizer (see load_model.h).
#include "train/cli/load_model.h"

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
  // The loaded store becomes the model's: no second copy of the buffers.
  return LoadedModel{nn::gpt_create(ck.meta.config, std::move(ck.store)), data::make_tokenizer(ck.meta.tokenizer),
                     ck.meta.train.step};
}

}  // namespace cli
