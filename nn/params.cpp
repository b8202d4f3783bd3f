// The parameter table, in nanoGPT's state_dict order and names (see params.h).
#include "nn/params.h"

#include "autograd/base/check.h"
#include "autograd/kernels/bf16.h"
#include "autograd/kernels/split_master.h"

namespace nn {

bool is_block_linear_weight(ParamRole role) {
  return role == ParamRole::QkvWeight || role == ParamRole::AttnProjWeight ||
         role == ParamRole::MlpUpWeight || role == ParamRole::MlpDownWeight;
}

int param_part(ParamRole role) {
  switch (role) {
    case ParamRole::MlpNormWeight: case ParamRole::MlpNormBias: case ParamRole::MlpUpWeight:
    case ParamRole::MlpUpBias: case ParamRole::MlpDownWeight: case ParamRole::MlpDownBias:
    case ParamRole::FinalNormWeight: case ParamRole::FinalNormBias: case ParamRole::OutputHead:
      return 1;
    default:
      return 0;
  }
}

bool is_layernorm_weight(ParamRole role) {
  return role == ParamRole::AttnNormWeight || role == ParamRole::MlpNormWeight ||
         role == ParamRole::FinalNormWeight;
}

int64_t mlp_hidden(const GPTConfig& c) { return 4 * c.n_embd; }

int64_t mlp_up_rows(const GPTConfig& c) { return c.mlp == MlpKind::Swiglu ? 2 * mlp_hidden(c) : mlp_hidden(c); }

const ParamInfo* ParamLayout::find(const std::string& name) const {
  for (const ParamInfo& p : table)
    if (p.name == name) return &p;
  return nullptr;
}

const ParamInfo& ParamLayout::first(ParamRole role) const {
  for (const ParamInfo& p : table)
    if (p.role == role) return p;
  TG_CHECK(false && "role absent from the table");
  return table.front();
}

int64_t ParamLayout::num_parameters() const {
  int64_t n = 0;
  for (const ParamInfo& p : table) n += p.numel;
  return n;
}

ParamLayout param_layout(const GPTConfig& c) {
  const int64_t V = c.vocab_size, T = c.block_size, C = c.n_embd;
  ParamLayout layout;
  int64_t layer = -1;
  auto add = [&](const std::string& name, ParamRole role, std::vector<int64_t> shape) {
    ParamInfo p;
    p.name = name;
    p.shape = std::move(shape);
    p.role = role;
    p.layer = layer;
    p.decay = p.shape.size() == 2;
    p.numel = 1;
    for (int64_t d : p.shape) p.numel *= d;
    layout.table.push_back(std::move(p));
  };
  auto add_bias = [&](const std::string& name, ParamRole role, int64_t n) {
    if (c.bias) add(name, role, {n});
  };
  // RMSNorm has a gain and no bias, whatever config.bias says.
  auto add_norm = [&](const std::string& name, ParamRole weight, ParamRole bias) {
    add(name + ".weight", weight, {C});
    if (c.norm == NormKind::LayerNorm) add_bias(name + ".bias", bias, C);
  };
  const int64_t up = mlp_up_rows(c);

  using R = ParamRole;
  add("transformer.wte.weight", R::TokenEmbedding, {V, C});
  if (c.pos_encoding == PosEncoding::Learned) add("transformer.wpe.weight", R::PositionEmbedding, {T, C});
  for (layer = 0; layer < c.n_layer; ++layer) {
    const std::string h = "transformer.h." + std::to_string(layer) + ".";
    add_norm(h + "ln_1", R::AttnNormWeight, R::AttnNormBias);
    add(h + "attn.c_attn.weight", R::QkvWeight, {3 * C, C});
    add_bias(h + "attn.c_attn.bias", R::QkvBias, 3 * C);
    add(h + "attn.c_proj.weight", R::AttnProjWeight, {C, C});
    add_bias(h + "attn.c_proj.bias", R::AttnProjBias, C);
    add_norm(h + "ln_2", R::MlpNormWeight, R::MlpNormBias);
    add(h + "mlp.c_fc.weight", R::MlpUpWeight, {up, C});
    add_bias(h + "mlp.c_fc.bias", R::MlpUpBias, up);
    add(h + "mlp.c_proj.weight", R::MlpDownWeight, {C, mlp_hidden(c)});
    add_bias(h + "mlp.c_proj.bias", R::MlpDownBias, C);
  }
  layer = -1;
  add_norm("transformer.ln_f", R::FinalNormWeight, R::FinalNormBias);
  if (!c.tied) add("lm_head.weight", R::OutputHead, {V, C});

  // Offsets: decayed tensors first (see ParamLayout), each rounded up to 16
  // floats so every view starts 64-byte aligned.
  int64_t offset = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (ParamInfo& p : layout.table) {
      if (p.decay != (pass == 0)) continue;
      p.offset = offset;
      offset += (p.numel + 15) / 16 * 16;
    }
    if (pass == 0) layout.n_decay = offset;
  }
  layout.total = offset;
  return layout;
}

float* ParamValues::floats() {
  TG_CHECK(precision_ == autograd::Precision::Fp32);  // a split master is no float
  return buffer_.data();
}

const float* ParamValues::floats() const {
  TG_CHECK(precision_ == autograd::Precision::Fp32);
  return buffer_.data();
}

uint16_t* ParamValues::hi() {
  TG_CHECK(precision_ == autograd::Precision::Bf16);
  return reinterpret_cast<uint16_t*>(buffer_.data());
}

uint16_t* ParamValues::lo() { return hi() + n_split_; }

autograd::SplitMasters ParamValues::split() const {
  TG_CHECK(precision_ == autograd::Precision::Bf16);
  return autograd::SplitMasters{buffer_.data(), n_split_};
}

float* ParameterStore::param(const std::string& name) {
  const ParamInfo* p = find(name);
  TG_CHECK(p != nullptr);
  TG_CHECK(precision() == autograd::Precision::Fp32 || p->offset >= n_decay);  // a split master is no float
  return values.place(p->offset);
}

float* ParameterStore::grad(const std::string& name) {
  const ParamInfo* p = find(name);
  TG_CHECK(p != nullptr);
  return grads.data() + p->offset;
}

void set_precision(ParameterStore& store, autograd::Precision precision) {
  ParamValues& v = store.values;
  if (v.precision_ == precision) return;
  if (precision == autograd::Precision::Bf16) {
    TG_CHECK(kernels::bf16_matmul_available());
    kernels::split_master_in_place(v.buffer_.data(), v.n_split_);
  } else {
    kernels::join_master_in_place(v.buffer_.data(), v.n_split_);
  }
  v.precision_ = precision;
}

autograd::RunPrecision run_precision(const ParameterStore& store) {
  if (store.precision() == autograd::Precision::Fp32) return autograd::RunPrecision{};
  return autograd::RunPrecision{autograd::Precision::Bf16, store.values.split()};
}

JoinedMasters::JoinedMasters(ParameterStore& store) : store_(store), was_(store.precision()) {
  set_precision(store_, autograd::Precision::Fp32);
}

JoinedMasters::~JoinedMasters() { set_precision(store_, was_); }

ParameterStore parameter_store_create(const GPTConfig& config, bool training) {
  ParameterStore store;
  static_cast<ParamLayout&>(store) = param_layout(config);
  store.values.buffer_.resize(store.total);
  store.values.n_split_ = store.n_decay;
  if (!training) return store;
  store.grads.resize(store.total);
  store.m.resize(store.total);
  store.v.resize(store.total);
  return store;
}

int64_t matmul_parameters(const GPTConfig& config) {
  int64_t n = 0;
  for (const ParamInfo& p : param_layout(config).table)
    if (is_block_linear_weight(p.role) || p.role == ParamRole::OutputHead ||
        (config.tied && p.role == ParamRole::TokenEmbedding))
      n += p.numel;
  return n;
}

double training_flops_per_token(const GPTConfig& c) {
  return 6.0 * static_cast<double>(matmul_parameters(c)) +
         12.0 * static_cast<double>(c.n_layer * c.n_embd * c.block_size);
}

}  // namespace nn
