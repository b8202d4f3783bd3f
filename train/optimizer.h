// The optimizer's three parts, applied by train_step.cpp in this order:
// the global gradient norm, the clipping factor it decides, and one update
// (decoupled weight decay on 2-D parameters only) that also leaves every
// gradient zero: AdamW over every parameter, or Muon over the blocks'
// matrices and AdamW over the rest (Note [Muon]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/buffer.h"
#include "nn/params.h"

namespace train {

struct AdamWConfig {
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;
  float grad_clip = 1.0f;  // 0 disables clipping
};

// Global L2 norm of all gradients (deterministic for any thread count).
double grad_norm(const nn::ParameterStore& store);

// What clipping scales every gradient by: grad_clip / (norm + 1e-6) when the
// norm exceeds grad_clip (as torch.nn.utils.clip_grad_norm_), else 1.
float clip_factor(const AdamWConfig& cfg, double norm);

// One AdamW step with learning rate lr as step number `step` (1-based, for
// bias correction), reading each gradient times `grad_scale`. Note [Fused
// optimizer pass]: the kernel writes 0 into each gradient right after
// reading it, so clipping's scale, the update and the zeroing the next
// backward needs (it adds into the gradients) are one sweep over memory. In a
// bf16 run (store.precision() is Bf16) the sweep reads and writes the 2-D tensors' split
// masters, so their bf16 copies are current when it returns; Muon::update
// and OptimizerShard::update likewise.
void adamw_update(nn::ParameterStore& store, const AdamWConfig& cfg, float lr, int64_t step,
                  float grad_scale);
// The same over n elements from `offset`, with moments m[n] and v[n] and
// this weight decay: split masters inside a bf16 run's 2-D prefix, float32
// after it (the range must not straddle n_decay).
void adamw_update_range(nn::ParameterStore& store, int64_t offset, int64_t n, float* m, float* v,
                        const AdamWConfig& cfg, float lr, float weight_decay, int64_t step, float grad_scale);

// Note [Muon]
// Muon (Keller Jordan, 2024; modded-nanoGPT's speedrun, nanochat) updates a
// weight matrix W[rows, cols] with its momentum orthogonalised:
//   m ← μ·m + g                     (μ = --muon-momentum, 0.95)
//   u = g + μ·m                     (Nesterov)
//   X = u / (‖u‖_F + 1e-7), transposed when tall, so X is [R, K] with R ≤ K
//   5 times: A = X·Xᵀ, X ← a·X + (b·A + c·A·A)·X,  (a, b, c) = (3.4445, -4.7750, 2.0315)
//   W ← W·(1 - lr·wd) - lr·√max(1, rows/cols)·X   (X transposed back)
// With X = U·S·Vᵀ, each iteration is U·f(S)·Vᵀ with f(σ) = aσ + bσ³ + cσ⁵:
// it keeps the singular vectors and moves every singular value toward 1.
// The Frobenius norm bounds the spectral one, so the first X has σ ≤ 1;
// f'(0) = a = 3.4 lifts small σ fast (five iterations take every σ from
// about 2e-3 up into [0.68, 1.21]) at the price of never converging to 1
// exactly: the update is U·Vᵀ, the (semi-)orthogonal matrix nearest the momentum,
// up to a factor within that band, computed with 15 matmuls (three
// per iteration, every one kernels' sgemm, R×R×K at most; in a bf16 run
// the bf16 linear kernels, operands rounded to bf16 and float32 sums:
// kernels::newton_schulz_bf16) and no SVD. Every
// direction of the update then moves the layer's outputs about as much,
// however unevenly the gradient spreads over them; √max(1, rows/cols) gives
// a tall matrix (c_attn [3C, C], c_fc [4C, C]) the RMS update of a square
// one.
//
// Only the 2-D matrices inside the blocks (attn.c_attn, attn.c_proj,
// mlp.c_fc — SwiGLU's gate and value rows included — and mlp.c_proj:
// nn::is_block_linear_weight) are Muon's. The argument is about hidden
// linear maps, whose input and output are both activations; the token
// embedding is a lookup (each step touches a few rows: orthogonalising it
// would spread one token's gradient over every row), the position table
// likewise, and the output head is judged by a softmax over the vocabulary;
// gains and biases are vectors. Those stay with AdamW at their own peak
// learning rate (--adamw-lr), which follows the run's schedule in proportion
// to Muon's (--lr): lr_AdamW(s) = lr(s)·adamw_lr/--lr. --weight-decay is the
// decoupled decay of both, on 2-D weights only.
//
// Muon's momentum lives in the store's first-moment buffer m, at the
// matrices' own offsets, and their second moments v stay zero: the flat
// buffers, the checkpoint layout (/optimizer/m, /optimizer/v) and every
// reader of them are AdamW's; /optimizer's `name` attribute says whose
// state it is ("adamw" when absent). A resumed run keeps its optimizer.
// Muon needs a whole matrix at once, so it does not run with
// --shard-optimizer (a rank's slice cuts matrices).
enum class OptimizerKind { AdamW, Muon };

const char* optimizer_name(OptimizerKind kind);  // "adamw", "muon"
// False, leaving *kind alone, for a name that is neither.
bool optimizer_parse(const std::string& name, OptimizerKind* kind);

struct MuonConfig {
  float momentum = 0.95f;   // μ, --muon-momentum
  double adamw_lr = 3e-3;   // peak learning rate of the parameters AdamW keeps, --adamw-lr
};

// Whether Muon updates this parameter (Note [Muon]): a block's linear weight.
bool muon_owns(nn::ParamRole role);

// Muon over the block matrices, AdamW over the rest (Note [Muon]). The
// scratch for the largest matrix is allocated here, once: a step allocates
// nothing.
class Muon {
 public:
  // peak_lr is the run's --lr (Muon's), against which adamw_lr is scaled.
  Muon(const nn::ParamLayout& layout, const MuonConfig& cfg, double peak_lr);

  // One step as adamw_update: the block matrices by Muon at lr, the rest by
  // AdamW at lr·adamw_lr/peak_lr (step for its bias correction), each
  // gradient read times grad_scale, then left zero. In a bf16 run (store
  // split) Newton–Schulz's products have bf16 operands, as the run's
  // matmuls (kernels::muon_update_split).
  void update(nn::ParameterStore& store, const AdamWConfig& cfg, float lr, int64_t step,
              float grad_scale);

 private:
  struct Matrix {
    int64_t offset, rows, cols;
  };
  struct Span {
    int64_t offset, numel;
  };
  std::vector<Matrix> matrices_;  // Muon's
  std::vector<Span> decayed_;     // AdamW's 2-D tensors (wte, wpe, lm_head); the vectors are [n_decay, total)
  float momentum_;
  double adamw_lr_scale_;         // adamw_lr / peak_lr
  int64_t scratch_floats_ = 0;    // one matrix's update, the largest's
  autograd::FloatBuffer scratch_; // one such per thread
};

}  // namespace train
