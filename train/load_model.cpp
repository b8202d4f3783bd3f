// Checkpoint → model + tokenizer (see load_model.h).
#include "train/load_model.h"

#include "checkpoints/checkpoint.h"

namespace cli {

LoadedModel load_model(const std::string& path) {
  checkpoints::Loaded ck = checkpoints::load_checkpoint(path, false);
  LoadedModel out{nn::make_gpt(ck.meta.config), data::make_tokenizer(ck.meta.tokenizer), ck.meta.train.step};
  out.model.store = std::move(ck.store);
  nn::bind_views(out.model);
  return out;
}

}  // namespace cli
