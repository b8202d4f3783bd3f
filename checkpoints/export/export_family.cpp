// The family table and the choice of a model's family (Note [Export families]).
#include "checkpoints/export/export_family.h"

#include <utility>

#include "autograd/base/check.h"

namespace checkpoints {

namespace {

using nn::MlpKind, nn::NormKind;

// GPT-2's Hugging Face names are ours (`tapegpt import` reads them back).
TensorName ours_in_hf(const char* ours, const char* gguf) { return {ours, Part::All, gguf, ours}; }

const std::vector<TensorName> kGpt2Tensors = {
    ours_in_hf("transformer.wte.weight", "token_embd.weight"),
    ours_in_hf("transformer.wpe.weight", "position_embd.weight"),  // the sinusoidal table when sinusoidal
    ours_in_hf("transformer.h.{L}.ln_1.weight", "blk.{L}.attn_norm.weight"),
    ours_in_hf("transformer.h.{L}.ln_1.bias", "blk.{L}.attn_norm.bias"),
    ours_in_hf("transformer.h.{L}.attn.c_attn.weight", "blk.{L}.attn_qkv.weight"),  // rows q, k, v as ours
    ours_in_hf("transformer.h.{L}.attn.c_attn.bias", "blk.{L}.attn_qkv.bias"),
    ours_in_hf("transformer.h.{L}.attn.c_proj.weight", "blk.{L}.attn_output.weight"),
    ours_in_hf("transformer.h.{L}.attn.c_proj.bias", "blk.{L}.attn_output.bias"),
    ours_in_hf("transformer.h.{L}.ln_2.weight", "blk.{L}.ffn_norm.weight"),
    ours_in_hf("transformer.h.{L}.ln_2.bias", "blk.{L}.ffn_norm.bias"),
    ours_in_hf("transformer.h.{L}.mlp.c_fc.weight", "blk.{L}.ffn_up.weight"),
    ours_in_hf("transformer.h.{L}.mlp.c_fc.bias", "blk.{L}.ffn_up.bias"),
    ours_in_hf("transformer.h.{L}.mlp.c_proj.weight", "blk.{L}.ffn_down.weight"),
    ours_in_hf("transformer.h.{L}.mlp.c_proj.bias", "blk.{L}.ffn_down.bias"),
    ours_in_hf("transformer.ln_f.weight", "output_norm.weight"),
    ours_in_hf("transformer.ln_f.bias", "output_norm.bias"),
    ours_in_hf("lm_head.weight", "output.weight"),  // untied only (or Gguf::output_required)
};

// Llama's names (gguf-py's tensor_mapping.py, transformers' modeling_llama),
// which Arcee and Qwen3 share; Arcee's MLP has no gate, Qwen3 adds q/k norms.
std::vector<TensorName> llama_like(MlpKind mlp, bool qk_norm) {
  std::vector<TensorName> v = {
      {"transformer.wte.weight", Part::All, "token_embd.weight", "model.embed_tokens.weight"},
      {"transformer.h.{L}.ln_1.weight", Part::All, "blk.{L}.attn_norm.weight", "model.layers.{L}.input_layernorm.weight"},
      {"transformer.h.{L}.attn.c_attn.weight", Part::Q, "blk.{L}.attn_q.weight", "model.layers.{L}.self_attn.q_proj.weight"},
      {"transformer.h.{L}.attn.c_attn.weight", Part::K, "blk.{L}.attn_k.weight", "model.layers.{L}.self_attn.k_proj.weight"},
      {"transformer.h.{L}.attn.c_attn.weight", Part::V, "blk.{L}.attn_v.weight", "model.layers.{L}.self_attn.v_proj.weight"},
      {"transformer.h.{L}.attn.c_attn.bias", Part::Q, "blk.{L}.attn_q.bias", "model.layers.{L}.self_attn.q_proj.bias"},
      {"transformer.h.{L}.attn.c_attn.bias", Part::K, "blk.{L}.attn_k.bias", "model.layers.{L}.self_attn.k_proj.bias"},
      {"transformer.h.{L}.attn.c_attn.bias", Part::V, "blk.{L}.attn_v.bias", "model.layers.{L}.self_attn.v_proj.bias"},
  };
  if (qk_norm) {
    v.push_back({nullptr, Part::Ones, "blk.{L}.attn_q_norm.weight", "model.layers.{L}.self_attn.q_norm.weight"});
    v.push_back({nullptr, Part::Ones, "blk.{L}.attn_k_norm.weight", "model.layers.{L}.self_attn.k_norm.weight"});
  }
  v.insert(v.end(), {
      {"transformer.h.{L}.attn.c_proj.weight", Part::All, "blk.{L}.attn_output.weight", "model.layers.{L}.self_attn.o_proj.weight"},
      {"transformer.h.{L}.attn.c_proj.bias", Part::All, "blk.{L}.attn_output.bias", "model.layers.{L}.self_attn.o_proj.bias"},
      {"transformer.h.{L}.ln_2.weight", Part::All, "blk.{L}.ffn_norm.weight", "model.layers.{L}.post_attention_layernorm.weight"},
  });
  if (mlp == MlpKind::Swiglu)
    v.insert(v.end(), {
        {"transformer.h.{L}.mlp.c_fc.weight", Part::Gate, "blk.{L}.ffn_gate.weight", "model.layers.{L}.mlp.gate_proj.weight"},
        {"transformer.h.{L}.mlp.c_fc.weight", Part::Up, "blk.{L}.ffn_up.weight", "model.layers.{L}.mlp.up_proj.weight"},
        {"transformer.h.{L}.mlp.c_fc.bias", Part::Gate, "blk.{L}.ffn_gate.bias", "model.layers.{L}.mlp.gate_proj.bias"},
        {"transformer.h.{L}.mlp.c_fc.bias", Part::Up, "blk.{L}.ffn_up.bias", "model.layers.{L}.mlp.up_proj.bias"},
    });
  else
    v.insert(v.end(), {
        {"transformer.h.{L}.mlp.c_fc.weight", Part::All, "blk.{L}.ffn_up.weight", "model.layers.{L}.mlp.up_proj.weight"},
        {"transformer.h.{L}.mlp.c_fc.bias", Part::All, "blk.{L}.ffn_up.bias", "model.layers.{L}.mlp.up_proj.bias"},
    });
  v.insert(v.end(), {
      {"transformer.h.{L}.mlp.c_proj.weight", Part::All, "blk.{L}.ffn_down.weight", "model.layers.{L}.mlp.down_proj.weight"},
      {"transformer.h.{L}.mlp.c_proj.bias", Part::All, "blk.{L}.ffn_down.bias", "model.layers.{L}.mlp.down_proj.bias"},
      {"transformer.ln_f.weight", Part::All, "output_norm.weight", "model.norm.weight"},
      {"lm_head.weight", Part::All, "output.weight", "lm_head.weight"},
  });
  return v;
}

const std::vector<TensorName> kLlamaTensors = llama_like(MlpKind::Swiglu, false);
const std::vector<TensorName> kArceeTensors = llama_like(MlpKind::Relu2, false);
const std::vector<TensorName> kQwen3Tensors = llama_like(MlpKind::Swiglu, true);

constexpr Positions kAbs = Positions::LearnedOrSinusoidal, kRope = Positions::Rope;

// Earlier rows win ties in the refusal's "nearest" (Arcee before Qwen3: the
// --budget recipe is ReLU²).
//  name       norm               mlp              positions qk_norm biases
//             GGUF: arch  adjacent_rope gelu_tanh_only output_required parallel_residual_key
//             HF: arch  model_type  hidden_act  conv1d  mlp_bias_key
const std::vector<Family> kFamilies = {
    {"GPT-2", NormKind::LayerNorm, MlpKind::Gelu, kAbs, false, Biases::Zeros,
     {"gpt2", false, true, false, false},
     {"GPT2LMHeadModel", "gpt2", nullptr, true, false}, &kGpt2Tensors},
    {"Llama", NormKind::RMSNorm, MlpKind::Swiglu, kRope, false, Biases::Optional,
     {"llama", true, false, false, false},
     {"LlamaForCausalLM", "llama", "silu", false, true}, &kLlamaTensors},
    {"Arcee", NormKind::RMSNorm, MlpKind::Relu2, kRope, false, Biases::None,
     {"arcee", true, false, false, false},
     {"ArceeForCausalLM", "arcee", "relu2", false, true}, &kArceeTensors},
    {"Qwen3", NormKind::RMSNorm, MlpKind::Swiglu, kRope, true, Biases::None,
     {"qwen3", false, false, false, false},
     {"Qwen3ForCausalLM", "qwen3", "silu", false, false}, &kQwen3Tensors},
    {"GPT-NeoX", NormKind::LayerNorm, MlpKind::Gelu, kRope, false, Biases::Zeros,
     {"gptneox", false, true, true, true},
     {nullptr, nullptr, nullptr, false, false}, &kGpt2Tensors},
};

// "--norm rmsnorm" for the config's value of one model choice; "--qk-norm"
// for a switch that is on.
std::string flag_of(const nn::GPTConfig& c, const char* key) {
  const nn::ModelChoice& row = nn::model_choice(key);
  if (row.is_switch) return std::string("--") + row.flag;
  return std::string("--") + row.flag + " " + nn::choice_name(row, c);
}

// One obstacle between a model and a family: the model's option, and the
// choice that would remove it.
struct Obstacle {
  std::string ours, fix;
};

std::vector<Obstacle> obstacles(const nn::GPTConfig& c, const Family& f) {
  std::vector<Obstacle> out;
  nn::GPTConfig want = c;
  want.norm = f.norm, want.mlp = f.mlp, want.qk_norm = f.qk_norm;
  if (c.norm != f.norm) out.push_back({flag_of(c, "norm"), flag_of(want, "norm")});
  if (c.mlp != f.mlp) out.push_back({flag_of(c, "mlp"), flag_of(want, "mlp")});
  if ((c.pos_encoding == nn::PosEncoding::Rope) != (f.positions == kRope))
    out.push_back({flag_of(c, "pos_encoding"),
                   f.positions == kRope ? "--pos-encoding rope" : "--pos-encoding learned or sinusoidal"});
  if (c.qk_norm != f.qk_norm)
    out.push_back(c.qk_norm ? Obstacle{"--qk-norm", "no --qk-norm"} : Obstacle{"no --qk-norm", "--qk-norm"});
  if (c.bias && f.biases == Biases::None) out.push_back({"biases", "--no-bias"});
  // A model choice no family names (e.g. --logit-softcap) must be at its
  // default: a new choice is refused here until a family learns it.
  // (--gelu is each format's to check.)
  for (const nn::ModelChoice& row : nn::model_choices()) {
    const std::string key = row.key;
    if (key == "norm" || key == "mlp" || key == "pos_encoding" || key == "gelu" || key == "qk_norm") continue;
    if (row.get(c) != row.get(nn::GPTConfig{})) out.push_back({flag_of(c, row.key), std::string("no --") + row.flag});
  }
  return out;
}

std::string joined(const std::vector<std::string>& items, const char* last) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? (i + 1 == items.size() ? last : ", ") : "") + items[i];
  return s;
}

}  // namespace

const std::vector<Family>& export_families() { return kFamilies; }

FamilyChoice export_family(const nn::GPTConfig& c) {
  // The families with the fewest obstacles are the nearest.
  std::vector<std::pair<const Family*, std::vector<Obstacle>>> nearest;
  for (const Family& f : kFamilies) {
    std::vector<Obstacle> o = obstacles(c, f);
    if (o.empty()) return {&f, ""};
    if (!nearest.empty() && o.size() > nearest[0].second.size()) continue;
    if (!nearest.empty() && o.size() < nearest[0].second.size()) nearest.clear();
    nearest.push_back({&f, std::move(o)});
  }
  std::vector<std::string> ours, fixes;
  for (const auto& [f, obs] : nearest) {
    std::vector<std::string> fix;
    for (const Obstacle& o : obs) {
      bool seen = false;
      for (const std::string& s : ours) seen = seen || s == o.ours;
      if (!seen) ours.push_back(o.ours);
      fix.push_back(o.fix);
    }
    fixes.push_back(joined(fix, " and ") + " (" + f->name + " family: GGUF " + f->gguf.arch +
                    (f->hf.arch ? std::string(", Hugging Face ") + f->hf.arch : std::string(", GGUF only")) + ")");
  }
  return {nullptr, "this model's " + joined(ours, " and ") +
                       " cannot be expressed: no runtime computes that mix exactly; the nearest exportable "
                       "choice is " + joined(fixes, " or ")};
}

const float* export_param(const nn::ParameterStore& store, const std::string& name) {
  const nn::ParamInfo* p = store.find(name);
  return p ? store.values.floats() + p->offset : nullptr;  // floats(): a float32 store's
}

}  // namespace checkpoints
