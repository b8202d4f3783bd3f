// The parameter table, the one place a GPT's parameters are spelled out: for a
// config, every tensor with its nanoGPT state_dict name, PyTorch shape, role,
// AdamW decay and place in four flat buffers (parameters, gradients, AdamW's
// two moments). The flat buffers, the model's views (gpt_bind_views), its
// initialisation (gpt_init), checkpoints, `tapegpt params`, the FLOP count and
// the widths the arena plan uses all read it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/buffer.h"
#include "autograd/precision.h"
#include "nn/config.h"

namespace nn {

// Which tensor of the model an entry is: picks its view, its initialisation
// and its row in `tapegpt params`. Shapes use C = n_embd, V = vocab_size,
// T = block_size.
enum class ParamRole {
  TokenEmbedding,     // transformer.wte.weight [V, C], also the output matrix when tied
  PositionEmbedding,  // transformer.wpe.weight [T, C], learned positions only
  // In every block, transformer.h.<layer>.:
  AttnNormWeight, AttnNormBias,  // ln_1 [C]; RMSNorm has no bias
  QkvWeight, QkvBias,            // attn.c_attn [3C, C]: rows q…, k…, v…
  AttnProjWeight, AttnProjBias,  // attn.c_proj [C, C]: a residual projection
  MlpNormWeight, MlpNormBias,    // ln_2 [C]
  MlpUpWeight, MlpUpBias,        // mlp.c_fc [4C, C]; [2·4C, C] for SwiGLU (Note [SwiGLU rows])
  MlpDownWeight, MlpDownBias,    // mlp.c_proj [C, 4C]: a residual projection
  // After the blocks:
  FinalNormWeight, FinalNormBias,  // transformer.ln_f [C]
  OutputHead,                      // lm_head.weight [V, C], untied only
};

// Note [Block parts]: the model marks on the tape (autograd::BlockMark) the
// entries of each block's attention half (layer l, part 0: ln_1 … the first
// residual add) and MLP half (layer l, part 1), and of the head (layer -1,
// part 1: ln_f and lm_head); the embeddings (layer -1, part 0) are unmarked,
// entry 0. param_part says which part a parameter belongs to, so the MPI
// gradient buckets (train/distributed/grad_buckets.h) know after which entry of the
// backward each parameter's gradient is final.
int param_part(ParamRole role);

// A block's linear-layer weight [out, in]: c_attn, attn.c_proj, c_fc, mlp.c_proj.
bool is_block_linear_weight(ParamRole role);
// A normalisation's gain, LayerNorm's or RMSNorm's: ln_1, ln_2, ln_f.
bool is_layernorm_weight(ParamRole role);

// Note [SwiGLU rows]: the MLP's hidden width H is 4C for every --mlp, so
// mlp.c_proj stays [C, 4C]. SwiGLU's c_fc computes the gate and the value at
// once: its weight is [2H, C], rows 0..H-1 the gate a, rows H..2H-1 the value
// b (its bias likewise), and the MLP is c_proj(silu(a)·b), the layout
// kernels::swiglu_forward reads from inp[N, 2H]. nanoGPT names are kept.
int64_t mlp_hidden(const GPTConfig& config);    // H = 4C, c_proj's input width
int64_t mlp_up_rows(const GPTConfig& config);   // c_fc's output width: H, or 2H for SwiGLU

struct ParamInfo {
  std::string name;            // e.g. "transformer.h.0.attn.c_attn.weight"
  std::vector<int64_t> shape;  // PyTorch shape, e.g. {3C, C}
  ParamRole role = ParamRole::TokenEmbedding;
  int64_t layer = -1;          // block index; -1 outside the blocks
  bool decay = false;          // AdamW weight decay: every 2-D tensor (nanoGPT's groups)
  int64_t numel = 0;
  int64_t offset = 0;          // first element in each flat buffer
};

// The table and where each entry lives in the flat buffers. Decayed (2-D)
// tensors come first, so the optimizer runs as two contiguous passes:
// [0, n_decay) with decay, the rest without.
struct ParamLayout {
  std::vector<ParamInfo> table;  // in nanoGPT's state_dict order
  int64_t total = 0;             // floats per flat buffer, alignment padding included
  int64_t n_decay = 0;

  const ParamInfo* find(const std::string& name) const;  // null if absent
  // The first entry of a role (block 0's for block roles); aborts if absent.
  const ParamInfo& first(ParamRole role) const;
  int64_t num_parameters() const;  // exact count, no padding
};

// The table of a config, laid out, with no buffers: cheap even for the
// largest presets. The config must be valid (config_error(config) == "").
ParamLayout param_layout(const GPTConfig& config);

struct ParameterStore;

// The store's weights in the form its precision keeps them (Note [Run
// precision] in autograd/precision.h). In float32 every value is a float.
// In bf16 the 2-D tensors' float32 masters, the first n_split values, are
// split in place (Note [Split master weights] in
// autograd/kernels/split_master.h): those bytes hold the n_split bf16
// copies the matmuls read (the `hi` plane), then the masters' low halves;
// the vectors after them stay float32. The buffer is never handed out as
// floats in bf16: floats() refuses a split store, and its split masters are
// reached only as the two uint16 planes they are.
class ParamValues {
 public:
  autograd::Precision precision() const { return precision_; }
  int64_t size() const { return buffer_.size(); }

  // Every value as a float32: a float32 store's. A bf16 store has none to
  // give (aborts): set_precision(store, Fp32) or JoinedMasters first.
  float* floats();
  const float* floats() const;
  // The float32 values after the 2-D masters, [n_split, size), in either
  // precision.
  float* vectors() { return buffer_.data() + n_split_; }
  // A bf16 store's split masters (aborts in float32): the planes, and the
  // run's view of them.
  uint16_t* hi();
  uint16_t* lo();
  autograd::SplitMasters split() const;
  // Where the value at `offset` lies, for a view that names it
  // (nn::gpt_bind_views): a split master's place is read only through the
  // run's precision (RunPrecision::bf16_copy, ::values).
  float* place(int64_t offset) { return buffer_.data() + offset; }
  // The buffer's 32-bit words, whatever form they hold: to checksum, or to
  // gather between ranks that hold the same form. Not values.
  uint32_t* words() { return reinterpret_cast<uint32_t*>(buffer_.data()); }
  const uint32_t* words() const { return reinterpret_cast<const uint32_t*>(buffer_.data()); }

 private:
  friend ParameterStore parameter_store_create(const GPTConfig&, bool);
  friend void set_precision(ParameterStore&, autograd::Precision);
  autograd::FloatBuffer buffer_;
  int64_t n_split_ = 0;  // the 2-D masters a bf16 store splits: the layout's n_decay
  autograd::Precision precision_ = autograd::Precision::Fp32;
};

// The layout with its four flat buffers: the weights (in their precision's
// form), and float32 gradients and AdamW moments.
struct ParameterStore : ParamLayout {
  ParamValues values;
  autograd::FloatBuffer grads, m, v;

  autograd::Precision precision() const { return values.precision(); }
  float* param(const std::string& name);  // a float32 tensor (aborts if absent or split)
  float* grad(const std::string& name);
};

// Makes `precision` the store's: Bf16 splits its 2-D masters in place into
// their bf16 copies and low halves, Fp32 joins them back; nothing if the
// store is in it already. Every forward over the store then runs in it
// (run_precision). Bf16 needs kernels::bf16_matmul_available(). Load a
// checkpoint before, not after.
void set_precision(ParameterStore& store, autograd::Precision precision);

// The precision a forward over this store runs in, for its ops' context
// (Note [Run precision]): the store's, with its split masters in bf16.
autograd::RunPrecision run_precision(const ParameterStore& store);

// The float32 masters of a split store, joined back for the life of this
// object (a save reads them as float32), and split again after.
class JoinedMasters {
 public:
  explicit JoinedMasters(ParameterStore& store);
  ~JoinedMasters();
  JoinedMasters(const JoinedMasters&) = delete;
  JoinedMasters& operator=(const JoinedMasters&) = delete;

 private:
  ParameterStore& store_;
  autograd::Precision was_;
};

// Lays out the table for a config and allocates the four zeroed buffers, or
// only `params` when !training (a converter needs no gradients or moments,
// and for GPT-2 XL each buffer is 6 GB).
ParameterStore parameter_store_create(const GPTConfig& config, bool training = true);

// Parameters that take part in a matmul per token: every block's linear
// weights and the output matrix (wte when tied).
int64_t matmul_parameters(const GPTConfig& config);
// Training FLOPs per token (forward + backward): 6·matmul parameters plus
// 12·n_layer·n_embd·T for the attention products (the PaLM appendix count).
double training_flops_per_token(const GPTConfig& config);

}  // namespace nn
