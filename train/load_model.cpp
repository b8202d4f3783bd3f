// Checkpoint → model + tokenizer (see load_model.h).
#include "train/load_model.h"

#include "checkpoints/checkpoint.h"

namespace cli {

LoadedModel load_model(const std::string& path) {
  checkpoints::Loaded ck = checkpoints::load_checkpoint(path, false);
  // The loaded store becomes the model's: no second copy of the buffers.
  return LoadedModel{nn::gpt_create(ck.meta.config, std::move(ck.store)), data::make_tokenizer(ck.meta.tokenizer),
                     ck.meta.train.step};
}

}  // namespace cli
