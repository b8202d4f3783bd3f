// Model and tokenizer → GGUF (Note [GGUF export]).
#include "checkpoints/gguf_export.h"

#include <vector>

#include "autograd/base/check.h"
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

// gpt2 and gptneox: the same tensors, but gptneox has RoPE instead of a
// position table and always reads output.weight.
void write_gpt2(Writer& w, bool neox) {
  const nn::GPTConfig& c = w.m.config;
  const int64_t C = c.n_embd, H = nn::mlp_hidden(c);
  w.param("token_embd.weight", "transformer.wte.weight");
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
  if (!c.tied) w.param("output.weight", "lm_head.weight");
  else if (neox) w.param("output.weight", "transformer.wte.weight");  // required there
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
  // GPT-2's own regex: gpt2's words exactly; for char and byte any cut
  // between characters gives the same tokens (Note [Byte-level vocabulary]).
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

void gguf_export(const std::string& path, const ExportModel& m, GgufDtype dtype) {
  TG_CHECK(gguf_refusal(m.config, m.tokenizer).empty());
  const nn::GPTConfig& c = m.config;
  const ExportFamily family = export_family(c).family;
  const bool llama = family == ExportFamily::Llama, neox = family == ExportFamily::NeoX;
  const std::string arch = gguf_architecture(family);
  Writer w{m, dtype, {}};
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
  write_tokenizer(g, m.tokenizer, c.vocab_size);
  if (llama) write_llama(w);
  else write_gpt2(w, neox);
  g.write(path);
}

}  // namespace checkpoints
