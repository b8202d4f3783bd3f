// Model and tokenizer → Hugging Face directory (Note [Hugging Face export]).
#include "checkpoints/hf_export.h"

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "autograd/base/atomic_file.h"
#include "autograd/base/check.h"
#include "autograd/base/errors.h"
#include "autograd/kernels/kernels.h"
#include "checkpoints/byte_level_vocab.h"
#include "checkpoints/export_family.h"
#include "checkpoints/safetensors_write.h"

namespace checkpoints {

namespace {

using json = nlohmann::ordered_json;

const float* param_or_null(const ExportModel& m, const std::string& name) { return export_param(m.store, name); }

std::vector<float> copy_of(const float* p, int64_t n) { return std::vector<float>(p, p + n); }

// Ours (out, in) → Conv1D's (in, out).
std::vector<float> transposed(const float* w, int64_t out, int64_t in) {
  std::vector<float> t(static_cast<size_t>(out * in));
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i) t[static_cast<size_t>(i * out + o)] = w[o * in + i];
  return t;
}

std::vector<SafetensorsEntry> gpt2_tensors(const ExportModel& m) {
  const nn::GPTConfig& c = m.config;
  std::vector<SafetensorsEntry> out;
  for (const nn::ParamInfo& p : m.store.table) {
    const float* w = param_or_null(m, p.name);
    if (nn::is_block_linear_weight(p.role))
      out.push_back({p.name, {p.shape[1], p.shape[0]}, transposed(w, p.shape[0], p.shape[1])});
    else
      out.push_back({p.name, p.shape, copy_of(w, p.numel)});
  }
  if (m.position_table)
    out.push_back({"transformer.wpe.weight", {c.block_size, c.n_embd},
                   copy_of(m.position_table, c.block_size * c.n_embd)});
  // Biases a model without them lacks, as zeros: GPT-2 always has them.
  const int64_t C = c.n_embd, H = nn::mlp_hidden(c);
  auto zeros_unless_present = [&](const std::string& name, int64_t n) {
    if (!m.store.find(name)) out.push_back({name, {n}, std::vector<float>(static_cast<size_t>(n), 0.0f)});
  };
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const std::string t = "transformer.h." + std::to_string(l) + ".";
    zeros_unless_present(t + "ln_1.bias", C);
    zeros_unless_present(t + "attn.c_attn.bias", 3 * C);
    zeros_unless_present(t + "attn.c_proj.bias", C);
    zeros_unless_present(t + "ln_2.bias", C);
    zeros_unless_present(t + "mlp.c_fc.bias", H);
    zeros_unless_present(t + "mlp.c_proj.bias", C);
  }
  zeros_unless_present("transformer.ln_f.bias", C);
  return out;
}

json gpt2_config(const ExportModel& m, int32_t end_of_text) {
  const nn::GPTConfig& c = m.config;
  json j;
  j["architectures"] = {"GPT2LMHeadModel"};
  j["model_type"] = "gpt2";
  j["vocab_size"] = c.vocab_size;
  j["n_positions"] = c.block_size;
  j["n_ctx"] = c.block_size;
  j["n_embd"] = c.n_embd;
  j["n_layer"] = c.n_layer;
  j["n_head"] = c.n_head;
  j["n_inner"] = nullptr;  // 4·n_embd
  j["activation_function"] = c.gelu == kernels::GeluKind::Tanh ? "gelu_new" : "gelu";
  j["layer_norm_epsilon"] = static_cast<double>(kernels::kLayerNormEps);
  j["resid_pdrop"] = 0.0, j["embd_pdrop"] = 0.0, j["attn_pdrop"] = 0.0;
  j["scale_attn_weights"] = true;
  j["tie_word_embeddings"] = c.tied;
  if (end_of_text >= 0) j["bos_token_id"] = end_of_text, j["eos_token_id"] = end_of_text;
  j["torch_dtype"] = "float32";
  return j;
}

std::vector<SafetensorsEntry> llama_tensors(const ExportModel& m) {
  const nn::GPTConfig& c = m.config;
  const int64_t C = c.n_embd, H = nn::mlp_hidden(c);
  std::vector<SafetensorsEntry> out;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, const float* p) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    out.push_back({name, std::move(shape), copy_of(p, n)});
  };
  add("model.embed_tokens.weight", {c.vocab_size, C}, param_or_null(m, "transformer.wte.weight"));
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const std::string t = "transformer.h." + std::to_string(l) + ".", h = "model.layers." + std::to_string(l) + ".";
    add(h + "input_layernorm.weight", {C}, param_or_null(m, t + "ln_1.weight"));
    const float* qkv = param_or_null(m, t + "attn.c_attn.weight");
    add(h + "self_attn.q_proj.weight", {C, C}, qkv);
    add(h + "self_attn.k_proj.weight", {C, C}, qkv + C * C);
    add(h + "self_attn.v_proj.weight", {C, C}, qkv + 2 * C * C);
    if (const float* b = param_or_null(m, t + "attn.c_attn.bias")) {
      add(h + "self_attn.q_proj.bias", {C}, b);
      add(h + "self_attn.k_proj.bias", {C}, b + C);
      add(h + "self_attn.v_proj.bias", {C}, b + 2 * C);
    }
    add(h + "self_attn.o_proj.weight", {C, C}, param_or_null(m, t + "attn.c_proj.weight"));
    if (const float* b = param_or_null(m, t + "attn.c_proj.bias")) add(h + "self_attn.o_proj.bias", {C}, b);
    add(h + "post_attention_layernorm.weight", {C}, param_or_null(m, t + "ln_2.weight"));
    const float* fc = param_or_null(m, t + "mlp.c_fc.weight");  // gate rows, then value rows
    add(h + "mlp.gate_proj.weight", {H, C}, fc);
    add(h + "mlp.up_proj.weight", {H, C}, fc + H * C);
    if (const float* b = param_or_null(m, t + "mlp.c_fc.bias")) {
      add(h + "mlp.gate_proj.bias", {H}, b);
      add(h + "mlp.up_proj.bias", {H}, b + H);
    }
    add(h + "mlp.down_proj.weight", {C, H}, param_or_null(m, t + "mlp.c_proj.weight"));
    if (const float* b = param_or_null(m, t + "mlp.c_proj.bias")) add(h + "mlp.down_proj.bias", {C}, b);
  }
  add("model.norm.weight", {C}, param_or_null(m, "transformer.ln_f.weight"));
  if (!c.tied) add("lm_head.weight", {c.vocab_size, C}, param_or_null(m, "lm_head.weight"));
  return out;
}

json llama_config(const ExportModel& m, int32_t end_of_text) {
  const nn::GPTConfig& c = m.config;
  json j;
  j["architectures"] = {"LlamaForCausalLM"};
  j["model_type"] = "llama";
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.n_embd;
  j["intermediate_size"] = nn::mlp_hidden(c);
  j["num_hidden_layers"] = c.n_layer;
  j["num_attention_heads"] = c.n_head;
  j["num_key_value_heads"] = c.n_head;
  j["head_dim"] = c.head_size();
  j["hidden_act"] = "silu";
  j["max_position_embeddings"] = c.block_size;
  j["rms_norm_eps"] = static_cast<double>(kernels::kRMSNormEps);
  j["rope_theta"] = 10000.0;
  j["attention_bias"] = c.bias;
  j["mlp_bias"] = c.bias;
  j["tie_word_embeddings"] = c.tied;
  if (end_of_text >= 0) j["bos_token_id"] = end_of_text, j["eos_token_id"] = end_of_text;
  j["torch_dtype"] = "float32";
  return j;
}

// GPT2Tokenizer's vocab.json ({token: id}) and merges.txt.
std::string vocab_json(const ByteLevelVocab& v) {
  json j = json::object();
  for (size_t id = 0; id < v.tokens.size(); ++id) j[v.tokens[id]] = id;
  return j.dump();
}

std::string merges_txt(const ByteLevelVocab& v) {
  std::string out = "#version: 0.2\n";
  for (const std::string& m : v.merges) out += m + "\n";
  return out;
}

std::string tokenizer_config(const ExportModel& m, const ByteLevelVocab& v) {
  json j;
  j["tokenizer_class"] = "GPT2Tokenizer";
  j["model_max_length"] = m.config.block_size;
  j["add_prefix_space"] = false;
  // Decoding must give back the bytes exactly, so no space clean-up.
  j["clean_up_tokenization_spaces"] = false;
  // Only GPT-2's tokenizer has <|endoftext|>; without it GPT2Tokenizer must
  // not invent one (its default would become a new id past the model's rows).
  for (const char* key : {"bos_token", "eos_token", "unk_token"}) {
    if (v.end_of_text >= 0) j[key] = "<|endoftext|>";
    else j[key] = nullptr;
  }
  return j.dump(2) + "\n";
}

}  // namespace

std::string hf_refusal(const nn::GPTConfig& config, const data::TokenizerSpec& tokenizer) {
  const FamilyChoice f = export_family(config);
  if (!f.refusal.empty()) return f.refusal;
  if (f.family == ExportFamily::NeoX)
    return "this model's --pos-encoding rope with --norm layernorm --mlp gelu is exported to GGUF only (llama.cpp's "
           "gptneox); Hugging Face's GPTNeoXForCausalLM layout is not written";
  return byte_level_refusal(tokenizer);
}

const std::vector<std::string>& hf_export_files() {
  static const std::vector<std::string> files = {"model.safetensors", "config.json", "vocab.json", "merges.txt",
                                                 "tokenizer_config.json"};
  return files;
}

void hf_export(const std::string& dir, const ExportModel& m) {
  TG_CHECK(hf_refusal(m.config, m.tokenizer).empty());
  const bool llama = export_family(m.config).family == ExportFamily::Llama;
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
      safetensors_write(f, llama ? llama_tensors(m) : gpt2_tensors(m));
      f.finish();
    }
    text("config.json", (llama ? llama_config(m, vocab.end_of_text) : gpt2_config(m, vocab.end_of_text)).dump(2) + "\n");
    text("vocab.json", vocab_json(vocab));
    text("merges.txt", merges_txt(vocab));
    text("tokenizer_config.json", tokenizer_config(m, vocab));
    for (auto& f : files) f->publish();
  } catch (...) {
    if (created) std::filesystem::remove(dir, ec);  // only if still empty
    throw;
  }
}

}  // namespace checkpoints
