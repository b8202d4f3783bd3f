// Model and tokenizer → Hugging Face directory (Note [Hugging Face export]).
#include "checkpoints/export/hf_export.h"

#include <filesystem>
#include <memory>

#include "autograd/base/atomic_file.h"
#include "autograd/base/check.h"
#include "autograd/base/errors.h"
#include "checkpoints/export/byte_level_vocab.h"
#include "checkpoints/export/export_family.h"
#include "checkpoints/export/hf_config.h"
#include "checkpoints/export/safetensors_write.h"

namespace checkpoints {

std::string hf_refusal(const nn::GPTConfig& config, const data::TokenizerSpec& tokenizer) {
  const FamilyChoice f = export_family(config);
  if (!f.family) return f.refusal;
  if (!f.family->hf.arch)
    return std::string("this model's --pos-encoding rope with --norm layernorm --mlp gelu is exported to GGUF only "
                       "(llama.cpp's ") + f.family->gguf.arch + "); Hugging Face's GPTNeoXForCausalLM layout is not written";
  return byte_level_refusal(tokenizer);
}

const std::vector<std::string>& hf_export_files() {
  static const std::vector<std::string> files = {"model.safetensors", "config.json", "vocab.json", "merges.txt",
                                                 "tokenizer_config.json"};
  return files;
}

void hf_export(const std::string& dir, const ExportModel& m) {
  TG_CHECK(hf_refusal(m.config, m.tokenizer).empty());
  const Family& family = *export_family(m.config).family;
  const ByteLevelVocab vocab = byte_level_vocab(m.tokenizer);
  std::error_code ec;
  const bool created = std::filesystem::create_directories(dir, ec);
  if (ec) throw tg::DataError("cannot create directory " + dir + ": " + ec.message());
  try {
    // Every file finished before any is renamed into place (AtomicFile).
    std::vector<std::unique_ptr<tg::AtomicFile>> files;
    auto open = [&](const std::string& name) -> tg::AtomicFile& {
      files.push_back(std::make_unique<tg::AtomicFile>(dir + "/" + name));
      return *files.back();
    };
    auto text = [&](const std::string& name, const std::string& s) {
      tg::AtomicFile& f = open(name);
      f.write(s.data(), s.size());
      f.finish();
    };
    {
      tg::AtomicFile& f = open("model.safetensors");
      safetensors_write(f, export_tensors(m, family, ExportFormat::Hf));
      f.finish();
    }
    text("config.json", hf_config_json(m, family, vocab.end_of_text));
    text("vocab.json", hf_vocab_json(vocab));
    text("merges.txt", hf_merges_txt(vocab));
    text("tokenizer_config.json", hf_tokenizer_config(m, vocab));
    for (auto& f : files) f->publish();
  } catch (...) {
    if (created) std::filesystem::remove(dir, ec);  // only if still empty
    throw;
  }
}

}  // namespace checkpoints
