// Parameter table construction, in nanoGPT's state_dict order and names.
#include "nn/params.h"

#include "autograd/base/check.h"

namespace nn {

const ParamInfo* ParameterStore::find(const std::string& name) const {
  for (const ParamInfo& p : table)
    if (p.name == name) return &p;
  return nullptr;
}

float* ParameterStore::param(const std::string& name) {
  const ParamInfo* p = find(name);
  TG_CHECK(p != nullptr);
  return params.data() + p->offset;
}

float* ParameterStore::grad(const std::string& name) {
  const ParamInfo* p = find(name);
  TG_CHECK(p != nullptr);
  return grads.data() + p->offset;
}

ParameterStore make_parameter_store(const GPTConfig& c, bool training) {
  const int64_t V = c.vocab_size, T = c.block_size, C = c.n_embd;
  ParameterStore store;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    ParamInfo p;
    p.name = name;
    p.shape = std::move(shape);
    p.numel = 1;
    for (int64_t d : p.shape) p.numel *= d;
    p.decay = p.shape.size() == 2;
    store.table.push_back(std::move(p));
  };
  auto add_bias = [&](const std::string& name, int64_t n) {
    if (c.bias) add(name, {n});
  };

  add("transformer.wte.weight", {V, C});
  if (c.pos_encoding == PosEncoding::Learned) add("transformer.wpe.weight", {T, C});
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const std::string h = "transformer.h." + std::to_string(l) + ".";
    add(h + "ln_1.weight", {C});
    add_bias(h + "ln_1.bias", C);
    add(h + "attn.c_attn.weight", {3 * C, C});
    add_bias(h + "attn.c_attn.bias", 3 * C);
    add(h + "attn.c_proj.weight", {C, C});
    add_bias(h + "attn.c_proj.bias", C);
    add(h + "ln_2.weight", {C});
    add_bias(h + "ln_2.bias", C);
    add(h + "mlp.c_fc.weight", {4 * C, C});
    add_bias(h + "mlp.c_fc.bias", 4 * C);
    add(h + "mlp.c_proj.weight", {C, 4 * C});
    add_bias(h + "mlp.c_proj.bias", C);
  }
  add("transformer.ln_f.weight", {C});
  add_bias("transformer.ln_f.bias", C);
  if (!c.tied) add("lm_head.weight", {V, C});

  // Offsets: decayed tensors first (see the struct comment), each rounded up
  // to 16 floats so every view starts 64-byte aligned.
  int64_t offset = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (ParamInfo& p : store.table) {
      if (p.decay != (pass == 0)) continue;
      p.offset = offset;
      offset += (p.numel + 15) / 16 * 16;
    }
    if (pass == 0) store.n_decay = offset;
  }
  store.total = offset;
  store.params.resize(offset);
  if (!training) return store;
  store.grads.resize(offset);
  store.m.resize(offset);
  store.v.resize(offset);
  return store;
}

}  // namespace nn
