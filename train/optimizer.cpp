// Gradient norm, clipping factor, AdamW and Muon over the parameter store
// (see optimizer.h).
#include "train/optimizer.h"

#include <algorithm>
#include <cmath>

#include "autograd/kernels/kernels.h"

namespace train {

double grad_norm(const nn::ParameterStore& store) {
  return std::sqrt(kernels::sum_squares(store.grads.data(), store.total));
}

float clip_factor(const AdamWConfig& cfg, double norm) {
  if (cfg.grad_clip > 0.0f && norm > cfg.grad_clip) return static_cast<float>(cfg.grad_clip / (norm + 1e-6));
  return 1.0f;
}

uint16_t* bf16_copy_at(nn::ParameterStore& s, int64_t offset) {
  return s.params_bf16.size() == 0 ? nullptr : s.params_bf16.data() + offset;
}

void adamw_update(nn::ParameterStore& s, const AdamWConfig& cfg, float lr, int64_t step,
                  float grad_scale) {
  // The table puts every decayed (2-D) tensor in [0, n_decay): two passes.
  kernels::adamw_update(s.params.data(), s.m.data(), s.v.data(), s.grads.data(), s.n_decay, lr,
                        cfg.beta1, cfg.beta2, cfg.eps, cfg.weight_decay, step, grad_scale,
                        bf16_copy_at(s, 0));
  const int64_t rest = s.total - s.n_decay;
  kernels::adamw_update(s.params.data() + s.n_decay, s.m.data() + s.n_decay,
                        s.v.data() + s.n_decay, s.grads.data() + s.n_decay, rest, lr, cfg.beta1,
                        cfg.beta2, cfg.eps, 0.0f, step, grad_scale, bf16_copy_at(s, s.n_decay));
}

const char* optimizer_name(OptimizerKind kind) { return kind == OptimizerKind::Muon ? "muon" : "adamw"; }

bool optimizer_parse(const std::string& name, OptimizerKind* kind) {
  if (name == "adamw") *kind = OptimizerKind::AdamW;
  else if (name == "muon") *kind = OptimizerKind::Muon;
  else return false;
  return true;
}

bool muon_owns(nn::ParamRole role) { return nn::is_block_linear_weight(role); }

Muon::Muon(const nn::ParamLayout& layout, const MuonConfig& cfg, double peak_lr, bool bf16)
    : bf16_(bf16), momentum_(cfg.momentum), adamw_lr_scale_(cfg.adamw_lr / peak_lr) {
  int64_t scratch = 0;
  for (const nn::ParamInfo& p : layout.table) {
    if (muon_owns(p.role)) {
      matrices_.push_back({p.offset, p.shape[0], p.shape[1]});
      scratch = std::max(scratch, kernels::muon_scratch_floats(p.shape[0], p.shape[1]));
    } else if (p.decay) {
      decayed_.push_back({p.offset, p.numel});
    }
  }
  scratch_.resize(scratch);
}

void Muon::update(nn::ParameterStore& s, const AdamWConfig& cfg, float lr, int64_t step,
                  float grad_scale) {
  for (const Matrix& w : matrices_)
    kernels::muon_update(s.params.data() + w.offset, s.m.data() + w.offset, s.grads.data() + w.offset,
                         scratch_.data(), w.rows, w.cols, lr, momentum_, cfg.weight_decay, grad_scale, bf16_,
                         bf16_copy_at(s, w.offset));
  const float adamw_lr = static_cast<float>(static_cast<double>(lr) * adamw_lr_scale_);
  for (const Span& t : decayed_)
    kernels::adamw_update(s.params.data() + t.offset, s.m.data() + t.offset, s.v.data() + t.offset,
                          s.grads.data() + t.offset, t.numel, adamw_lr, cfg.beta1, cfg.beta2, cfg.eps,
                          cfg.weight_decay, step, grad_scale, bf16_copy_at(s, t.offset));
  // The vectors, contiguous after the 2-D tensors (nn::ParamLayout).
  const int64_t rest = s.total - s.n_decay;
  kernels::adamw_update(s.params.data() + s.n_decay, s.m.data() + s.n_decay, s.v.data() + s.n_decay,
                        s.grads.data() + s.n_decay, rest, adamw_lr, cfg.beta1, cfg.beta2, cfg.eps, 0.0f,
                        step, grad_scale, bf16_copy_at(s, s.n_decay));
}

}  // namespace train
