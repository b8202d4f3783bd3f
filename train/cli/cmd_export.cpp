// `tapegpt export`: a checkpoint as a GGUF file for llama.cpp and ollama, or
// as a Hugging Face directory (Note [GGUF export], Note [Hugging Face
// export]). Nothing is written for a model or tokenizer that the format
// cannot express exactly: one line says which option is the obstacle.
#include <cstdio>
#include <filesystem>

#include "autograd/base/errors.h"
#include "checkpoints/export/export_family.h"
#include "checkpoints/export/gguf_export.h"
#include "checkpoints/export/hf_export.h"
#include "train/cli/cli_util.h"
#include "train/cli/commands.h"
#include "train/cli/load_model.h"
#include "train/cli/output_files.h"

namespace cli {

int cmd_export(int argc, char** argv) {
  cxxopts::Options opts("tapegpt export",
                        "Export a checkpoint for llama.cpp / ollama (GGUF) or Hugging Face transformers: the GPT-2,\n"
                        "Llama, Arcee (--budget's recipe), Qwen3 (--qk-norm) and, GGUF only, GPT-NeoX families.\n"
                        "  tapegpt export --ckpt CKPT.h5 --format gguf --out model.gguf [--dtype f32|f16]\n"
                        "  tapegpt export --ckpt CKPT.h5 --format hf --out DIR");
  opts.add_options()
      ("ckpt", "checkpoint to export", cxxopts::value<std::string>())
      ("format", "gguf (llama.cpp, ollama, LM Studio) or hf (model.safetensors, config.json, tokenizer files)",
       cxxopts::value<std::string>())
      ("out", "the .gguf file (gguf) or the directory (hf) to write", cxxopts::value<std::string>())
      ("dtype", "gguf: f32, or f16 for the 2-D tensors (half the size; norms and biases stay f32)",
       cxxopts::value<std::string>()->default_value("f32"))
      ("overwrite", "replace --out (or, for hf, the files in it) if it exists");
  add_common_options(opts);
  cxxopts::ParseResult r;
  if (!parse_or_help(opts, argc, argv, &r)) return 0;
  const std::string ckpt = required_ckpt(r);
  if (!r.count("format")) throw tg::UsageError("--format gguf|hf is required");
  if (!r.count("out")) throw tg::UsageError("--out is required (the .gguf file, or the directory for --format hf)");
  const std::string format = get<std::string>(r, "format");
  const std::string out = get<std::string>(r, "out");
  const std::string dtype_name = get<std::string>(r, "dtype");
  if (format != "gguf" && format != "hf")
    throw tg::UsageError("--format must be gguf or hf, not '" + format + "'");
  if (dtype_name != "f32" && dtype_name != "f16")
    throw tg::UsageError("--dtype must be f32 or f16, not '" + dtype_name + "'");
  if (format == "hf" && r.count("dtype") && dtype_name != "f32")
    throw tg::UsageError("--dtype f16 is for --format gguf; the Hugging Face export is float32");
  const bool overwrite = r.count("overwrite") > 0;

  // Every check on --out before the checkpoint is read.
  std::error_code ec;
  if (format == "gguf") {
    if (std::filesystem::is_directory(out, ec))
      throw tg::UsageError("--out " + out + " is a directory; give the .gguf file to write, e.g. " + out +
                           "/model.gguf");
    refuse_existing({out}, overwrite);
  } else {
    if (std::filesystem::exists(out, ec) && !std::filesystem::is_directory(out, ec))
      throw tg::UsageError("--out " + out + " exists and is not a directory; --format hf writes a directory");
    std::vector<std::string> paths;
    for (const std::string& f : checkpoints::hf_export_files()) paths.push_back(out + "/" + f);
    refuse_existing(paths, overwrite);
  }

  LoadedModel lm = load_model(ckpt);
  const nn::GPT& model = lm.model;
  const data::TokenizerSpec& tokenizer = lm.tokenizer.spec();
  const std::string refusal = format == "gguf" ? checkpoints::gguf_refusal(model.config, tokenizer)
                                               : checkpoints::hf_refusal(model.config, tokenizer);
  if (!refusal.empty())
    throw tg::DataError(ckpt + ": cannot export to " + (format == "gguf" ? "GGUF" : "Hugging Face") + ": " +
                        refusal);

  const checkpoints::ExportModel em{
      model.config, model.store,
      model.config.pos_encoding == nn::PosEncoding::Sinusoidal ? model.sinusoid.data() : nullptr, tokenizer,
      std::filesystem::path(out).stem().string()};
  const checkpoints::Family& family = *checkpoints::export_family(model.config).family;
  if (format == "gguf") {
    const std::string note = checkpoints::gguf_export(
        out, em, dtype_name == "f16" ? checkpoints::GgufDtype::F16 : checkpoints::GgufDtype::F32);
    if (!note.empty()) std::printf("note: %s\n", note.c_str());
    std::printf("wrote %s: llama.cpp architecture %s, %s, %s%s tokenizer (%lld tokens)\n", out.c_str(),
                family.gguf.arch, dtype_name.c_str(), tokenizer.type.c_str(),
                tokenizer.split.empty() ? "" : (" (" + tokenizer.split + " split)").c_str(),
                static_cast<long long>(model.config.vocab_size));
  } else {
    checkpoints::hf_export(out, em);
    std::printf("wrote %s/: %s (model.safetensors, config.json, vocab.json, merges.txt, tokenizer_config.json)\n",
                out.c_str(), family.hf.arch);
  }
  return 0;
}

}  // namespace cli
