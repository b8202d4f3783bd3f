// config.json and the tokenizer files of a Hugging Face directory (hf_config.h).
#include "checkpoints/export/hf_config.h"

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "autograd/kernels/kernels.h"

namespace checkpoints {

namespace {

using json = nlohmann::ordered_json;

// The shortest decimal that reads back as the float x: 1e-05 for
// kRMSNormEps, not its double value 9.99999974737875e-06 (which Python's
// float32 rounds to the same eps, but reads as a different number).
double shortest_decimal(float x) {
  char buf[32];
  for (int digits = 1; digits <= 9; ++digits) {  // 9 digits always read back
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(x));
    if (std::strtof(buf, nullptr) == x) break;
  }
  return std::strtod(buf, nullptr);
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

// Llama's keys, which ArceeConfig and Qwen3Config share: every value given,
// since their defaults differ (Arcee's bos/eos ids 128000/128001, Qwen3's
// rms_norm_eps 1e-6 and head_dim 128).
json llama_like_config(const ExportModel& m, const Family& f, int32_t end_of_text) {
  const nn::GPTConfig& c = m.config;
  json j;
  j["architectures"] = {f.hf.arch};
  j["model_type"] = f.hf.model_type;
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.n_embd;
  j["intermediate_size"] = nn::mlp_hidden(c);
  j["num_hidden_layers"] = c.n_layer;
  j["num_attention_heads"] = c.n_head;
  j["num_key_value_heads"] = c.n_head;
  j["head_dim"] = c.head_size();
  j["hidden_act"] = f.hf.hidden_act;
  j["max_position_embeddings"] = c.block_size;
  j["rms_norm_eps"] = shortest_decimal(kernels::kRMSNormEps);  // Qwen3's q/k norms' too
  j["rope_theta"] = 10000.0;
  j["attention_bias"] = c.bias;
  if (f.hf.mlp_bias_key) j["mlp_bias"] = c.bias;
  j["tie_word_embeddings"] = c.tied;
  // null, not absent: the config classes' defaults name tokens we lack.
  j["bos_token_id"] = end_of_text >= 0 ? json(end_of_text) : json(nullptr);
  j["eos_token_id"] = end_of_text >= 0 ? json(end_of_text) : json(nullptr);
  j["torch_dtype"] = "float32";
  return j;
}

}  // namespace

std::string hf_config_json(const ExportModel& m, const Family& f, int32_t end_of_text) {
  const json j = f.hf.conv1d ? gpt2_config(m, end_of_text) : llama_like_config(m, f, end_of_text);
  return j.dump(2) + "\n";
}

// GPT2Tokenizer's vocab.json ({token: id}, the model's tokens then the
// pieces of Note [Byte-level vocabulary]) and merges.txt.
std::string hf_vocab_json(const ByteLevelVocab& v) {
  json j = json::object();
  for (size_t id = 0; id < v.tokens.size(); ++id) j[v.tokens[id]] = id;
  for (size_t i = 0; i < v.pieces.size(); ++i) j[v.pieces[i]] = v.tokens.size() + i;
  return j.dump();
}

std::string hf_merges_txt(const ByteLevelVocab& v) {
  std::string out = "#version: 0.2\n";
  for (const std::string& m : v.merges) out += m + "\n";
  return out;
}

std::string hf_tokenizer_config(const ExportModel& m, const ByteLevelVocab& v) {
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

}  // namespace checkpoints
