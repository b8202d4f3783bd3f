// Model and tokenizer → GGUF (Note [GGUF export]).
#include "checkpoints/gguf_export.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/base/check.h"
#include "autograd/kernels/kernels.h"
#include "checkpoints/byte_level_vocab.h"
#include "checkpoints/export_family.h"

namespace checkpoints {

namespace {

// llama.cpp's token types (llama_token_type).
constexpr int32_t kNormal = 1, kControl = 3, kUnused = 5;

struct Writer {
  const ExportModel& m;
  GgufDtype dtype;
  GgufWriter gguf;
  std::vector<float> silent_row;  // output row of an added end-of-text token (Note [Silent end-of-text])

  // A parameter under its GGUF name; 2-D ones in the chosen dtype.
  void tensor(const std::string& gguf_name, const std::vector<int64_t>& shape, const float* data) {
    gguf.add_tensor(gguf_name, shape, data, shape.size() == 2 ? dtype : GgufDtype::F32);
  }
  void param(const std::string& gguf_name, const std::string& ours) {
    const nn::ParamInfo* p = m.store.find(ours);
    TG_CHECK(p != nullptr);
    tensor(gguf_name, p->shape, export_param(m.store, ours));
  }
  // A bias llama.cpp's gpt2 requires: ours, or zeros (Note [GGUF export]).
  void bias_or_zeros(const std::string& gguf_name, const std::string& ours, int64_t n) {
    if (m.store.find(ours)) return param(gguf_name, ours);
    const std::vector<float> zeros(static_cast<size_t>(n), 0.0f);
    tensor(gguf_name, {n}, zeros.data());
  }
};

// Rows [row0, row0 + C) of a [rows, cols] tensor, each head's rows reordered
// from rotate_half pairs to adjacent pairs (Note [GGUF export]).
std::vector<float> rope_rows(const float* w, int64_t row0, int64_t C, int64_t cols, int64_t NH) {
  const int64_t HS = C / NH, half = HS / 2;
  std::vector<float> out(static_cast<size_t>(C * cols));
  for (int64_t h = 0; h < NH; ++h)
    for (int64_t i = 0; i < half; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        const float* src = w + (row0 + h * HS + i + j * half) * cols;
        std::copy(src, src + cols, out.begin() + (h * HS + 2 * i + j) * cols);
      }
  return out;
}

// token_embd and output with one more row each: zeros (the token is never
// read) and the silent row (Note [Silent end-of-text]).
void write_embeddings_with_silent_row(Writer& w) {
  const nn::GPTConfig& c = w.m.config;
  const int64_t V = c.vocab_size, C = c.n_embd;
  const float* wte = export_param(w.m.store, "transformer.wte.weight");
  std::vector<float> rows(wte, wte + V * C);
  rows.resize(static_cast<size_t>((V + 1) * C), 0.0f);
  w.tensor("token_embd.weight", {V + 1, C}, rows.data());
  const float* head = c.tied ? wte : export_param(w.m.store, "lm_head.weight");
  std::copy(head, head + V * C, rows.begin());
  std::copy(w.silent_row.begin(), w.silent_row.end(), rows.begin() + V * C);
  w.tensor("output.weight", {V + 1, C}, rows.data());
}

// gpt2 and gptneox: the same tensors, but gptneox has RoPE instead of a
// position table and always reads output.weight.
void write_gpt2(Writer& w, bool neox) {
  const nn::GPTConfig& c = w.m.config;
  const int64_t C = c.n_embd, H = nn::mlp_hidden(c);
  if (!w.silent_row.empty()) write_embeddings_with_silent_row(w);
  else w.param("token_embd.weight", "transformer.wte.weight");
  if (!neox) {  // gptneox has RoPE, no position table
    if (w.m.position_table) w.tensor("position_embd.weight", {c.block_size, C}, w.m.position_table);
    else w.param("position_embd.weight", "transformer.wpe.weight");
  }
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".", t = "transformer.h." + std::to_string(l) + ".";
    w.param(b + "attn_norm.weight", t + "ln_1.weight");
    w.bias_or_zeros(b + "attn_norm.bias", t + "ln_1.bias", C);
    w.param(b + "attn_qkv.weight", t + "attn.c_attn.weight");
    w.bias_or_zeros(b + "attn_qkv.bias", t + "attn.c_attn.bias", 3 * C);
    w.param(b + "attn_output.weight", t + "attn.c_proj.weight");
    w.bias_or_zeros(b + "attn_output.bias", t + "attn.c_proj.bias", C);
    w.param(b + "ffn_norm.weight", t + "ln_2.weight");
    w.bias_or_zeros(b + "ffn_norm.bias", t + "ln_2.bias", C);
    w.param(b + "ffn_up.weight", t + "mlp.c_fc.weight");
    w.bias_or_zeros(b + "ffn_up.bias", t + "mlp.c_fc.bias", H);
    w.param(b + "ffn_down.weight", t + "mlp.c_proj.weight");
    w.bias_or_zeros(b + "ffn_down.bias", t + "mlp.c_proj.bias", C);
  }
  w.param("output_norm.weight", "transformer.ln_f.weight");
  w.bias_or_zeros("output_norm.bias", "transformer.ln_f.bias", C);
  if (!w.silent_row.empty()) return;  // output written with token_embd
  if (!c.tied) w.param("output.weight", "lm_head.weight");
  else if (neox) w.param("output.weight", "transformer.wte.weight");  // required there
}

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

void write_llama(Writer& w) {
  const nn::GPTConfig& c = w.m.config;
  const int64_t C = c.n_embd, H = nn::mlp_hidden(c), NH = c.n_head;
  w.param("token_embd.weight", "transformer.wte.weight");
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".", t = "transformer.h." + std::to_string(l) + ".";
    w.param(b + "attn_norm.weight", t + "ln_1.weight");
    const float* qkv = export_param(w.m.store, t + "attn.c_attn.weight");
    w.tensor(b + "attn_q.weight", {C, C}, rope_rows(qkv, 0, C, C, NH).data());
    w.tensor(b + "attn_k.weight", {C, C}, rope_rows(qkv, C, C, C, NH).data());
    w.tensor(b + "attn_v.weight", {C, C}, qkv + 2 * C * C);
    if (const float* bias = export_param(w.m.store, t + "attn.c_attn.bias")) {
      w.tensor(b + "attn_q.bias", {C}, rope_rows(bias, 0, C, 1, NH).data());
      w.tensor(b + "attn_k.bias", {C}, rope_rows(bias, C, C, 1, NH).data());
      w.tensor(b + "attn_v.bias", {C}, bias + 2 * C);
    }
    w.param(b + "attn_output.weight", t + "attn.c_proj.weight");
    if (c.bias) w.param(b + "attn_output.bias", t + "attn.c_proj.bias");
    w.param(b + "ffn_norm.weight", t + "ln_2.weight");
    // c_fc [2H, C]: the gate's rows, then the value's (Note [SwiGLU rows]).
    const float* fc = export_param(w.m.store, t + "mlp.c_fc.weight");
    w.tensor(b + "ffn_gate.weight", {H, C}, fc);
    w.tensor(b + "ffn_up.weight", {H, C}, fc + H * C);
    if (const float* bias = export_param(w.m.store, t + "mlp.c_fc.bias")) {
      w.tensor(b + "ffn_gate.bias", {H}, bias);
      w.tensor(b + "ffn_up.bias", {H}, bias + H);
    }
    w.param(b + "ffn_down.weight", t + "mlp.c_proj.weight");
    if (c.bias) w.param(b + "ffn_down.bias", t + "mlp.c_proj.bias");
  }
  w.param("output_norm.weight", "transformer.ln_f.weight");
  if (!c.tied) w.param("output.weight", "lm_head.weight");
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

std::string gguf_architecture(ExportFamily family) {
  return family == ExportFamily::Llama ? "llama" : family == ExportFamily::NeoX ? "gptneox" : "gpt2";
}

std::string gguf_refusal(const nn::GPTConfig& config, const data::TokenizerSpec& tokenizer) {
  const FamilyChoice f = export_family(config);
  if (!f.refusal.empty()) return f.refusal;
  if (f.family != ExportFamily::Llama && config.gelu != kernels::GeluKind::Tanh)
    return "this model's --gelu erf cannot be expressed: llama.cpp's gpt2 and gptneox compute GELU's tanh "
           "approximation (--gelu tanh) only";
  return byte_level_refusal(tokenizer);
}

std::string gguf_export(const std::string& path, const ExportModel& m, GgufDtype dtype) {
  TG_CHECK(gguf_refusal(m.config, m.tokenizer).empty());
  const nn::GPTConfig& c = m.config;
  const ExportFamily family = export_family(c).family;
  const bool llama = family == ExportFamily::Llama, neox = family == ExportFamily::NeoX;
  const std::string arch = gguf_architecture(family);
  Writer w{m, dtype, {}, {}};
  GgufWriter& g = w.gguf;
  g.add_string("general.architecture", arch);
  g.add_string("general.name", m.name);
  g.add_u32("general.file_type", dtype == GgufDtype::F16 ? 1 : 0);  // llama_ftype: ALL_F32, MOSTLY_F16
  g.add_u32(arch + ".context_length", static_cast<uint32_t>(c.block_size));
  g.add_u32(arch + ".embedding_length", static_cast<uint32_t>(c.n_embd));
  g.add_u32(arch + ".feed_forward_length", static_cast<uint32_t>(nn::mlp_hidden(c)));
  g.add_u32(arch + ".block_count", static_cast<uint32_t>(c.n_layer));
  g.add_u32(arch + ".attention.head_count", static_cast<uint32_t>(c.n_head));
  if (llama) {
    g.add_u32(arch + ".attention.head_count_kv", static_cast<uint32_t>(c.n_head));
    g.add_f32(arch + ".attention.layer_norm_rms_epsilon", kernels::kRMSNormEps);
    g.add_u32(arch + ".rope.dimension_count", static_cast<uint32_t>(c.head_size()));
    g.add_f32(arch + ".rope.freq_base", 10000.0f);
    g.add_u32(arch + ".vocab_size", static_cast<uint32_t>(c.vocab_size));
  } else {
    g.add_f32(arch + ".attention.layer_norm_epsilon", kernels::kLayerNormEps);
  }
  if (neox) {
    // Sequential residuals, x + attn(ln_1(x)) then + mlp(ln_2(·)), as ours.
    g.add_bool(arch + ".use_parallel_residual", false);
    g.add_u32(arch + ".rope.dimension_count", static_cast<uint32_t>(c.head_size()));
    g.add_f32(arch + ".rope.freq_base", 10000.0f);
  }
  const bool needs_end_of_text = byte_level_vocab(m.tokenizer).end_of_text < 0 &&
                                 static_cast<int64_t>(m.tokenizer.tokens.size()) == c.vocab_size;
  if (needs_end_of_text && !llama) w.silent_row = silent_row(m, dtype);
  write_tokenizer(g, m.tokenizer, c.vocab_size + (w.silent_row.empty() ? 0 : 1));
  std::string note;
  if (!w.silent_row.empty())
    note = "added token " + std::to_string(c.vocab_size) + " <|endoftext|> as llama.cpp's end-of-text, with " +
           "probability 0, so generation never stops by it (Note [Silent end-of-text])";
  else if (needs_end_of_text && c.vocab_size > 11)
    note = "the " + m.tokenizer.type + " tokenizer has no end-of-text token, so llama.cpp takes token 11 (" +
           byte_level_spelling(m.tokenizer.tokens[11]) + ") as one and stops generating there";
  if (llama) write_llama(w);
  else write_gpt2(w, neox);
  g.write(path);
  return note;
}

}  // namespace checkpoints
