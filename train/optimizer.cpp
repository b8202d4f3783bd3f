// Gradient norm, clipping factor, AdamW and Muon over the parameter store
// (see optimizer.h).
#include "train/optimizer.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "autograd/base/check.h"
#include "autograd/kernels/kernels.h"

namespace train {

double grad_norm(const nn::ParameterStore& store) {
  return std::sqrt(kernels::sum_squares(store.grads.data(), store.total));
}

float clip_factor(const AdamWConfig& cfg, double norm) {
  if (cfg.grad_clip > 0.0f && norm > cfg.grad_clip) return static_cast<float>(cfg.grad_clip / (norm + 1e-6));
  return 1.0f;
}

void adamw_update_range(nn::ParameterStore& s, int64_t offset, int64_t n, float* m, float* v,
                        const AdamWConfig& cfg, float lr, float weight_decay, int64_t step, float grad_scale) {
  const bool split = s.precision() == autograd::Precision::Bf16;
  TG_CHECK(!split || offset >= s.n_decay || offset + n <= s.n_decay);
  if (split && offset < s.n_decay)
    kernels::adamw_update_split(s.values.hi() + offset, s.values.lo() + offset, m, v, s.grads.data() + offset, n,
                                lr, cfg.beta1, cfg.beta2, cfg.eps, weight_decay, step, grad_scale);
  else if (split)
    kernels::adamw_update(s.values.vectors() + (offset - s.n_decay), m, v, s.grads.data() + offset, n, lr,
                          cfg.beta1, cfg.beta2, cfg.eps, weight_decay, step, grad_scale);
  else
    kernels::adamw_update(s.values.floats() + offset, m, v, s.grads.data() + offset, n, lr, cfg.beta1, cfg.beta2,
                          cfg.eps, weight_decay, step, grad_scale);
}

void adamw_update(nn::ParameterStore& s, const AdamWConfig& cfg, float lr, int64_t step,
                  float grad_scale) {
  // The table puts every decayed (2-D) tensor in [0, n_decay): two passes.
  adamw_update_range(s, 0, s.n_decay, s.m.data(), s.v.data(), cfg, lr, cfg.weight_decay, step, grad_scale);
  adamw_update_range(s, s.n_decay, s.total - s.n_decay, s.m.data() + s.n_decay, s.v.data() + s.n_decay, cfg, lr,
                     0.0f, step, grad_scale);
}

const char* optimizer_name(OptimizerKind kind) { return kind == OptimizerKind::Muon ? "muon" : "adamw"; }

bool optimizer_parse(const std::string& name, OptimizerKind* kind) {
  if (name == "adamw") *kind = OptimizerKind::AdamW;
  else if (name == "muon") *kind = OptimizerKind::Muon;
  else return false;
  return true;
}

bool muon_owns(nn::ParamRole role) { return nn::is_block_linear_weight(role); }

Muon::Muon(const nn::ParamLayout& layout, const MuonConfig& cfg, double peak_lr)
    : momentum_(cfg.momentum), adamw_lr_scale_(cfg.adamw_lr / peak_lr) {
  int64_t scratch = 0;
  for (const nn::ParamInfo& p : layout.table) {
    if (muon_owns(p.role)) {
      matrices_.push_back({p.offset, p.shape[0], p.shape[1]});
      scratch = std::max(scratch, kernels::muon_scratch_floats(p.shape[0], p.shape[1]));
    } else if (p.decay) {
      decayed_.push_back({p.offset, p.numel});
    }
  }
  scratch_floats_ = scratch;
  scratch_.resize(omp_get_max_threads() * scratch);  // grown in update() if the threads grew
  // Largest first: the threads then finish together (Note [Muon across threads]).
  std::stable_sort(matrices_.begin(), matrices_.end(),
                   [](const Matrix& a, const Matrix& b) { return a.rows * a.cols > b.rows * b.cols; });
}

void Muon::update(nn::ParameterStore& s, const AdamWConfig& cfg, float lr, int64_t step,
                  float grad_scale) {
  // Note [Muon across threads]: each matrix's update (momentum, Newton-
  // Schulz, apply) runs whole on one thread, the matrices dealt to the
  // threads in turn, largest first. A block matrix of a small model is too
  // small for its ten matmuls and passes to pay a fork and join each; the
  // kernels inside run on the calling thread (nested regions are inactive)
  // and make the same calls on the same pieces as on many threads (Note
  // [bf16 matmuls], Note [Thread-count-independent sgemm]), so the bits do
  // not depend on the thread count. The deal is fixed (static, not dynamic):
  // a thread keeps its oneDNN primitives per shape, so a matrix that moved
  // to another thread when the machine is busy would make new ones in a
  // late step (tests/nn/test_no_alloc.cpp caught it under load).
  const int threads = omp_get_max_threads();
  if (scratch_.size() < threads * scratch_floats_) scratch_.resize(threads * scratch_floats_);
  const int64_t n = static_cast<int64_t>(matrices_.size());
#pragma omp parallel for schedule(static, 1)
  for (int64_t i = 0; i < n; ++i) {
    const Matrix& w = matrices_[static_cast<size_t>(i)];
    float* m = s.m.data() + w.offset;
    float* grad = s.grads.data() + w.offset;
    float* scratch = scratch_.data() + omp_get_thread_num() * scratch_floats_;
    if (s.precision() == autograd::Precision::Bf16)
      kernels::muon_update_split(s.values.hi() + w.offset, s.values.lo() + w.offset, m, grad, scratch, w.rows,
                                 w.cols, lr, momentum_, cfg.weight_decay, grad_scale);
    else
      kernels::muon_update(s.values.floats() + w.offset, m, grad, scratch, w.rows, w.cols, lr, momentum_,
                           cfg.weight_decay, grad_scale);
  }
  const float adamw_lr = static_cast<float>(static_cast<double>(lr) * adamw_lr_scale_);
  for (const Span& t : decayed_)
    adamw_update_range(s, t.offset, t.numel, s.m.data() + t.offset, s.v.data() + t.offset, cfg, adamw_lr,
                       cfg.weight_decay, step, grad_scale);
  // The vectors, contiguous after the 2-D tensors (nn::ParamLayout).
  adamw_update_range(s, s.n_decay, s.total - s.n_decay, s.m.data() + s.n_decay, s.v.data() + s.n_decay, cfg,
                     adamw_lr, 0.0f, step, grad_scale);
}

}  // namespace train
