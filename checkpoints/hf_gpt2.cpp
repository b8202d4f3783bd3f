// Hugging Face GPT-2 import (Note [Hugging Face GPT-2 layout]).
#include "checkpoints/hf_gpt2.h"

#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "autograd/base/check.h"
#include "autograd/base/errors.h"

namespace checkpoints {

namespace {

using json = nlohmann::json;

// What config.json says, or what the tensors imply when there is none.
struct HfConfig {
  int64_t n_layer = 0, n_head = 0, n_embd = 0, n_positions = 0, vocab_size = 0;
  bool tied = true;
  kernels::GeluKind gelu = kernels::GeluKind::Tanh;  // GPT-2's gelu_new
};

std::string dims(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// The tensors by name without the optional "transformer." prefix, buffers
// dropped; a name GPT-2 does not have is refused, so another architecture
// saved as safetensors is not half-imported.
std::map<std::string, const SafetensorsTensor*> weights_by_name(const Safetensors& file) {
  std::map<std::string, const SafetensorsTensor*> out;
  static const std::vector<std::string> kBlockParts = {
      "ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight",
      "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
      "mlp.c_proj.weight", "mlp.c_proj.bias"};
  for (const SafetensorsTensor& t : file.tensors) {
    std::string name = t.name;
    if (name.rfind("transformer.", 0) == 0) name = name.substr(12);
    bool known = name == "wte.weight" || name == "wpe.weight" || name == "ln_f.weight" ||
                 name == "ln_f.bias" || name == "lm_head.weight";
    bool buffer = false;
    if (name.rfind("h.", 0) == 0) {
      const size_t dot = name.find('.', 2);
      const std::string index = name.substr(2, dot == std::string::npos ? std::string::npos : dot - 2);
      const bool digits = !index.empty() && index.size() <= 6 &&
                          index.find_first_not_of("0123456789") == std::string::npos &&
                          (index == "0" || index[0] != '0');
      if (digits && dot != std::string::npos) {
        const std::string part = name.substr(dot + 1);
        buffer = part == "attn.bias" || part == "attn.masked_bias";
        for (const std::string& p : kBlockParts) known = known || part == p;
      }
    }
    if (buffer) continue;
    if (!known)
      throw tg::DataError("holds tensor " + safetensors_printable(t.name) +
                          ", which a GPT-2 language model does not have: this is not a GPT-2 "
                          "(GPT2Model / GPT2LMHeadModel) checkpoint");
    if (!out.emplace(name, &t).second)
      throw tg::DataError("holds '" + name + "' both with and without the 'transformer.' prefix");
  }
  return out;
}

int64_t config_int(const json& j, const char* key, bool required, int64_t fallback) {
  if (!j.contains(key) || j[key].is_null()) {
    if (required) throw tg::DataError(std::string("config.json has no \"") + key + "\"; it is required");
    return fallback;
  }
  const json& v = j[key];
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > (int64_t{1} << 40))
    throw tg::DataError(std::string("config.json \"") + key + "\" is " + v.dump().substr(0, 40) +
                        ", expected a positive integer");
  return v.get<int64_t>();
}

bool config_bool(const json& j, const char* key, bool fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_boolean())
    throw tg::DataError(std::string("config.json \"") + key + "\" is " + j[key].dump().substr(0, 40) +
                        ", expected true or false");
  return j[key].get<bool>();
}

HfConfig parse_config(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw tg::DataError(std::string("config.json is not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) throw tg::DataError("config.json is not a JSON object");
  if (j.contains("model_type") && j["model_type"] != "gpt2")
    throw tg::DataError("config.json says model_type " + j["model_type"].dump().substr(0, 40) +
                        "; tapegpt imports only GPT-2 (model_type \"gpt2\")");
  HfConfig c;
  c.n_layer = config_int(j, "n_layer", true, 0);
  c.n_head = config_int(j, "n_head", true, 0);
  c.n_embd = config_int(j, "n_embd", true, 0);
  c.vocab_size = config_int(j, "vocab_size", true, 0);
  // Old configs name the context n_ctx; current ones n_positions.
  c.n_positions = config_int(j, "n_positions", !j.contains("n_ctx"), 0);
  if (c.n_positions == 0) c.n_positions = config_int(j, "n_ctx", true, 0);
  c.tied = config_bool(j, "tie_word_embeddings", true);

  if (j.contains("activation_function")) {
    const json& a = j["activation_function"];
    // gelu_new, gelu_fast and gelu_pytorch_tanh are all the tanh
    // approximation (--gelu tanh); "gelu" is the exact erf one (--gelu erf).
    if (a == "gelu") c.gelu = kernels::GeluKind::Erf;
    else if (!(a == "gelu_new" || a == "gelu_fast" || a == "gelu_pytorch_tanh"))
      throw tg::DataError("config.json activation_function is " + a.dump().substr(0, 40) +
                          "; tapegpt computes GELU only: gelu_new (tanh, GPT-2's) or gelu (erf)");
  }
  if (j.contains("layer_norm_epsilon")) {
    const json& e = j["layer_norm_epsilon"];
    if (!e.is_number() || std::fabs(e.get<double>() - 1e-5) > 1e-12)
      throw tg::DataError("config.json layer_norm_epsilon is " + e.dump().substr(0, 40) +
                          "; tapegpt's LayerNorm uses GPT-2's 1e-5");
  }
  if (j.contains("n_inner") && !j["n_inner"].is_null() &&
      !(j["n_inner"].is_number_integer() && j["n_inner"].get<int64_t>() == 4 * c.n_embd))
    throw tg::DataError("config.json n_inner is " + j["n_inner"].dump().substr(0, 40) +
                        "; tapegpt's MLP is 4 × n_embd = " + std::to_string(4 * c.n_embd) + " wide");
  if (!config_bool(j, "scale_attn_weights", true))
    throw tg::DataError("config.json sets scale_attn_weights false; tapegpt's attention divides by √head_size");
  if (config_bool(j, "scale_attn_by_inverse_layer_idx", false))
    throw tg::DataError("config.json sets scale_attn_by_inverse_layer_idx; tapegpt's attention has no per-layer scale");
  if (config_bool(j, "add_cross_attention", false))
    throw tg::DataError("config.json sets add_cross_attention; a GPT-2 language model has none");
  return c;
}

HfConfig infer_config(const std::map<std::string, const SafetensorsTensor*>& w,
                      std::vector<std::string>* notes) {
  const auto wte = w.find("wte.weight"), wpe = w.find("wpe.weight");
  if (wte == w.end() || wpe == w.end())
    throw tg::DataError("has no " + std::string(wte == w.end() ? "wte.weight" : "wpe.weight") +
                        " tensor: not a GPT-2 checkpoint");
  const std::vector<int64_t>& e = wte->second->shape;
  const std::vector<int64_t>& p = wpe->second->shape;
  if (e.size() != 2 || p.size() != 2)
    throw tg::DataError("wte.weight " + dims(e) + " and wpe.weight " + dims(p) + " must both be 2-D");
  HfConfig c;
  c.vocab_size = e[0];
  c.n_embd = e[1];
  c.n_positions = p[0];
  while (w.count("h." + std::to_string(c.n_layer) + ".ln_1.weight")) ++c.n_layer;
  // No tensor records the head count; every GPT-2 size uses heads of 64.
  if (c.n_embd % 64 != 0)
    throw tg::DataError("no --config given, and n_embd " + std::to_string(c.n_embd) +
                        " is not a multiple of 64, so the head count cannot be inferred: pass --config config.json");
  c.n_head = c.n_embd / 64;
  const auto lm = w.find("lm_head.weight");
  if (lm != w.end() && (lm->second->dtype != wte->second->dtype || lm->second->bytes != wte->second->bytes ||
                        std::memcmp(lm->second->data, wte->second->data, static_cast<size_t>(lm->second->bytes))))
    c.tied = false;
  notes->push_back("no --config given: inferred n_layer " + std::to_string(c.n_layer) + ", n_embd " +
                   std::to_string(c.n_embd) + ", vocab_size " + std::to_string(c.vocab_size) +
                   ", n_positions " + std::to_string(c.n_positions) + " from the tensor shapes, and n_head " +
                   std::to_string(c.n_head) + " = n_embd / 64 (GPT-2's head size)" +
                   (c.tied ? "" : ", and an untied lm_head") + "; pass --config config.json if that is wrong");
  return c;
}

// One weight: its HF shape and, for Conv1D weights, the transpose to ours.
struct Expected {
  std::string hf_name, our_name;
  std::vector<int64_t> hf_shape;
  bool transpose = false;
};

// Our parameter table in HF's terms: the names without "transformer.", and
// the blocks' linear weights as Conv1D stores them, (in, out).
std::vector<Expected> expected_tensors(const nn::GPTConfig& g) {
  const std::string prefix = "transformer.";
  std::vector<Expected> out;
  for (const nn::ParamInfo& p : nn::param_layout(g).table) {
    const bool transpose = nn::is_block_linear_weight(p.role);
    const std::string hf = p.name.rfind(prefix, 0) == 0 ? p.name.substr(prefix.size()) : p.name;
    out.push_back(Expected{hf, p.name, transpose ? std::vector<int64_t>{p.shape[1], p.shape[0]} : p.shape,
                           transpose});
  }
  return out;
}

}  // namespace

HfGpt2 hf_gpt2_import(const Safetensors& file, const std::string& config_json) {
  HfGpt2 out;
  const std::map<std::string, const SafetensorsTensor*> w = weights_by_name(file);
  const HfConfig c = config_json.empty() ? infer_config(w, &out.notes) : parse_config(config_json);
  const std::string from = config_json.empty() ? " (inferred)" : " (config.json)";

  nn::GPTConfig& g = out.config;
  g.vocab_size = c.vocab_size;
  g.block_size = c.n_positions;
  g.n_layer = c.n_layer;
  g.n_head = c.n_head;
  g.n_embd = c.n_embd;
  g.bias = true;
  g.tied = c.tied;
  g.gelu = c.gelu;
  g.dropout = 0.0f;
  g.pos_encoding = nn::PosEncoding::Learned;
  const std::string err = nn::config_error(g);
  if (!err.empty()) throw tg::DataError("the model's shape" + from + " is not one tapegpt can run: " + err);

  // Every check before any allocation: the shapes bound what we allocate by
  // the file's own size.
  const std::vector<Expected> expected = expected_tensors(g);
  for (const Expected& e : expected) {
    const auto it = w.find(e.hf_name);
    if (it == w.end())
      throw tg::DataError("has no tensor '" + e.hf_name + "' (n_layer " + std::to_string(c.n_layer) + from +
                          "): the file is incomplete or not GPT-2");
    const SafetensorsTensor& t = *it->second;
    if (t.shape != e.hf_shape)
      throw tg::DataError("tensor '" + t.name + "' has shape " + dims(t.shape) + ", expected " + dims(e.hf_shape) +
                          " for n_embd " + std::to_string(c.n_embd) + from);
    if (!safetensors_float_dtype(t.dtype))
      throw tg::DataError("tensor '" + t.name + "' has dtype " + t.dtype +
                          "; tapegpt imports only F32, F16 and BF16 weights");
  }
  for (const auto& [name, t] : w) {
    bool used = false;
    for (const Expected& e : expected) used = used || e.hf_name == name;
    if (name == "lm_head.weight" && c.tied) {
      // A tied head saved anyway must be wte itself.
      const SafetensorsTensor& wte = *w.at("wte.weight");
      if (t->shape != wte.shape || t->dtype != wte.dtype ||
          std::memcmp(t->data, wte.data, static_cast<size_t>(t->bytes)) != 0)
        throw tg::DataError("lm_head.weight differs from wte.weight although the model ties them; "
                            "set \"tie_word_embeddings\": false in config.json to import an untied head");
      used = true;
    }
    if (!used)
      throw tg::DataError("holds tensor '" + t->name + "' beyond the model's n_layer " +
                          std::to_string(c.n_layer) + from + ": config.json and the weights disagree");
  }

  out.store = nn::parameter_store_create(g, /*training=*/false);
  std::vector<float> staged;
  for (const Expected& e : expected) {
    const SafetensorsTensor& t = *w.at(e.hf_name);
    staged.resize(static_cast<size_t>(t.numel));
    safetensors_to_float(t, staged.data());
    for (int64_t i = 0; i < t.numel; ++i)
      if (!std::isfinite(staged[static_cast<size_t>(i)]))
        throw tg::DataError("tensor '" + t.name + "' holds " + (std::isnan(staged[static_cast<size_t>(i)]) ? "NaN" : "Inf") +
                            " at element " + std::to_string(i) + ": the weights are damaged");
    const nn::ParamInfo* p = out.store.find(e.our_name);
    TG_CHECK(p != nullptr && p->numel == t.numel);  // expected_tensors mirrors the table
    float* dst = out.store.values.floats() + p->offset;
    if (!e.transpose) {
      std::memcpy(dst, staged.data(), static_cast<size_t>(t.numel) * sizeof(float));
      continue;
    }
    // Conv1D (in, out) → ours (out, in).
    const int64_t in = e.hf_shape[0], outs = e.hf_shape[1];
    for (int64_t i = 0; i < in; ++i)
      for (int64_t o = 0; o < outs; ++o) dst[o * in + i] = staged[static_cast<size_t>(i * outs + o)];
  }
  return out;
}

}  // namespace checkpoints
