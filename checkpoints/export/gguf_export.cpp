// Model and tokenizer → GGUF (Note [GGUF export]).
#include "checkpoints/export/gguf_export.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/base/check.h"
#include "autograd/kernels/kernels.h"
#include "checkpoints/export/byte_level_vocab.h"
#include "checkpoints/export/export_family.h"

namespace checkpoints {

namespace {

// llama.cpp's token types (llama_token_type).
constexpr int32_t kNormal = 1, kControl = 3, kUnused = 5;

// Note [Silent end-of-text]: llama.cpp's gpt2 tokenizer needs an end-of-text
// id, and without one in the file it takes id 11, an ordinary token for a
// char tokenizer (';' for Tiny Shakespeare's), so ollama would stop there.
// When the tokenizer has no end-of-text token and the vocabulary no spare
// row, a LayerNorm model gets one more token whose logit is a constant far
// below every other, so its probability is exactly 0 in float32 and the
// other tokens' are unchanged: generation never ends by it, as tapegpt's
// never does. The final LayerNorm gives h = g ⊙ x̂ + b with Σ_i x̂_i = 0, so
// the output row r_i = k / g_i gives r·h = k·s, s = Σ_i b_i/g_i, whatever
// the input; k makes that -kSilentLogit. Rounding perturbs it: r_i and h_i
// each by a relative ε (2^-24 in float32; 2^-11 when the weights, and so the
// activations llama.cpp multiplies them with, are float16), at most
// |k|·ε·Σ_i |h_i / g_i| ≤ |k|·ε·(2C + Σ_i |b_i/g_i|) (Σ x̂² = C bounds
// Σ |x̂| by C); the row is made only when that is at most half of |k·s|, so
// the logit stays below -kSilentLogit/2. Not made either when a gain is 0
// or, for float16, the row would exceed its range; RMSNorm (Llama) has no
// such row.
constexpr double kSilentLogit = 2000;  // exp(-1000 - max) underflows to 0 in float32

std::vector<float> silent_row(const ExportModel& m, GgufDtype dtype) {
  const nn::GPTConfig& c = m.config;
  if (c.norm != nn::NormKind::LayerNorm || !c.bias) return {};
  const float* g = export_param(m.store, "transformer.ln_f.weight");
  const float* b = export_param(m.store, "transformer.ln_f.bias");
  double s = 0, s_abs = 0, min_gain = INFINITY;
  for (int64_t i = 0; i < c.n_embd; ++i) {
    min_gain = std::min(min_gain, std::fabs(static_cast<double>(g[i])));
    if (g[i] == 0) return {};
    s += static_cast<double>(b[i]) / g[i];
    s_abs += std::fabs(static_cast<double>(b[i]) / g[i]);
  }
  const double eps = dtype == GgufDtype::F16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -24);
  if (s == 0 || eps * (2.0 * static_cast<double>(c.n_embd) + s_abs) > std::fabs(s) / 2) return {};
  const double k = -kSilentLogit / s;
  if (dtype == GgufDtype::F16 && std::fabs(k) / min_gain > 6e4) return {};  // float16's range, with margin
  std::vector<float> r(static_cast<size_t>(c.n_embd));
  for (int64_t i = 0; i < c.n_embd; ++i) r[static_cast<size_t>(i)] = static_cast<float>(k / g[i]);
  return r;
}

// token_embd and output with one more row each: zeros (the token is never
// read) and the silent row; output is written even when tied.
void add_silent_row(std::vector<ExportTensor>& tensors, const nn::GPTConfig& c, const std::vector<float>& silent) {
  auto find = [&](const char* name) -> ExportTensor* {
    for (ExportTensor& t : tensors)
      if (t.name == name) return &t;
    return nullptr;
  };
  if (!find("output.weight")) {  // tied: the head is token_embd's copy
    ExportTensor copy = *find("token_embd.weight");
    copy.name = "output.weight";
    tensors.push_back(std::move(copy));
  }
  ExportTensor& embd = *find("token_embd.weight");
  ExportTensor& output = *find("output.weight");
  const std::vector<int64_t> shape = {c.vocab_size, c.n_embd};
  TG_CHECK(embd.shape == shape && output.shape == shape);
  embd.shape = output.shape = {c.vocab_size + 1, c.n_embd};
  embd.data.resize(static_cast<size_t>((c.vocab_size + 1) * c.n_embd), 0.0f);
  output.data.insert(output.data.end(), silent.begin(), silent.end());
}

// tokenizer.ggml.*: the byte-level vocabulary, padded with unused tokens to
// the embedding's vocab_size rows.
void write_tokenizer(GgufWriter& g, const data::TokenizerSpec& spec, int64_t vocab_size) {
  ByteLevelVocab v = byte_level_vocab(spec);
  std::vector<int32_t> types(v.tokens.size(), kNormal);
  int32_t end_of_text = v.end_of_text;
  if (end_of_text >= 0) types[static_cast<size_t>(end_of_text)] = kControl;
  // Rows beyond the tokenizer (a vocab padded for speed) get names no text
  // can produce; the first is the end-of-text token when the tokenizer has
  // none, since llama.cpp otherwise takes id 11 for it.
  for (int64_t id = static_cast<int64_t>(v.tokens.size()); id < vocab_size; ++id) {
    if (end_of_text < 0) {
      end_of_text = static_cast<int32_t>(id);
      v.tokens.push_back("<|endoftext|>");
      types.push_back(kControl);
    } else {
      v.tokens.push_back("<|unused_" + std::to_string(id) + "|>");
      types.push_back(kUnused);
    }
  }
  g.add_string("tokenizer.ggml.model", "gpt2");
  // GPT-2's own regex: gpt2's and bpe's (gpt2 split) words exactly; for char
  // and byte any cut between characters gives the same tokens (Note
  // [Byte-level vocabulary]).
  g.add_string("tokenizer.ggml.pre", "gpt-2");
  g.add_strings("tokenizer.ggml.tokens", v.tokens);
  g.add_i32s("tokenizer.ggml.token_type", types);
  g.add_strings("tokenizer.ggml.merges", v.merges);
  if (end_of_text >= 0) {
    g.add_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(end_of_text));
    g.add_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(end_of_text));
  }
  // tapegpt prepends nothing to a text; neither may llama.cpp.
  g.add_bool("tokenizer.ggml.add_bos_token", false);
  g.add_bool("tokenizer.ggml.add_eos_token", false);
}

}  // namespace

std::string gguf_refusal(const nn::GPTConfig& config, const data::TokenizerSpec& tokenizer) {
  const FamilyChoice f = export_family(config);
  if (!f.family) return f.refusal;
  if (f.family->gguf.gelu_tanh_only && config.gelu != kernels::GeluKind::Tanh)
    return std::string("this model's --gelu erf cannot be expressed: llama.cpp's ") + f.family->gguf.arch +
           " computes GELU's tanh approximation (--gelu tanh) only";
  return byte_level_refusal(tokenizer);
}

std::string gguf_export(const std::string& path, const ExportModel& m, GgufDtype dtype) {
  TG_CHECK(gguf_refusal(m.config, m.tokenizer).empty());
  const nn::GPTConfig& c = m.config;
  const Family& f = *export_family(c).family;
  const std::string arch = f.gguf.arch;
  GgufWriter g;
  g.add_string("general.architecture", arch);
  g.add_string("general.name", m.name);
  g.add_u32("general.file_type", dtype == GgufDtype::F16 ? 1 : 0);  // llama_ftype: ALL_F32, MOSTLY_F16
  g.add_u32(arch + ".context_length", static_cast<uint32_t>(c.block_size));
  g.add_u32(arch + ".embedding_length", static_cast<uint32_t>(c.n_embd));
  g.add_u32(arch + ".feed_forward_length", static_cast<uint32_t>(nn::mlp_hidden(c)));
  g.add_u32(arch + ".block_count", static_cast<uint32_t>(c.n_layer));
  g.add_u32(arch + ".attention.head_count", static_cast<uint32_t>(c.n_head));
  if (f.norm == nn::NormKind::RMSNorm) {
    g.add_u32(arch + ".attention.head_count_kv", static_cast<uint32_t>(c.n_head));
    g.add_f32(arch + ".attention.layer_norm_rms_epsilon", kernels::kRMSNormEps);
    g.add_u32(arch + ".vocab_size", static_cast<uint32_t>(c.vocab_size));
  } else {
    g.add_f32(arch + ".attention.layer_norm_epsilon", kernels::kLayerNormEps);
  }
  // Sequential residuals, x + attn(ln_1(x)) then + mlp(ln_2(·)), as ours.
  if (f.gguf.parallel_residual_key) g.add_bool(arch + ".use_parallel_residual", false);
  if (f.positions == Positions::Rope) {
    g.add_u32(arch + ".rope.dimension_count", static_cast<uint32_t>(c.head_size()));
    g.add_f32(arch + ".rope.freq_base", 10000.0f);
  }
  const bool needs_end_of_text = byte_level_vocab(m.tokenizer).end_of_text < 0 &&
                                 static_cast<int64_t>(m.tokenizer.tokens.size()) == c.vocab_size;
  const std::vector<float> silent = needs_end_of_text ? silent_row(m, dtype) : std::vector<float>{};
  write_tokenizer(g, m.tokenizer, c.vocab_size + (silent.empty() ? 0 : 1));
  std::string note;
  if (!silent.empty())
    note = "added token " + std::to_string(c.vocab_size) + " <|endoftext|> as llama.cpp's end-of-text, with " +
           "probability 0, so generation never stops by it (Note [Silent end-of-text])";
  else if (needs_end_of_text && c.vocab_size > 11)
    note = "the " + m.tokenizer.type + " tokenizer has no end-of-text token, so llama.cpp takes token 11 (" +
           byte_level_spelling(m.tokenizer.tokens[11]) + ") as one and stops generating there";
  std::vector<ExportTensor> tensors = export_tensors(m, f, ExportFormat::Gguf);
  if (!silent.empty()) add_silent_row(tensors, c, silent);
  for (ExportTensor& t : tensors) {
    const GgufDtype type = t.shape.size() == 2 ? dtype : GgufDtype::F32;
    g.add_tensor(t.name, t.shape, std::move(t.data), type);
  }
  g.write(path);
  return note;
}

}  // namespace checkpoints
