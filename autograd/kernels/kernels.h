// The CPU kernels of tapegpt: plain functions over float pointers, in
// forward/backward pairs. Training (through the tape) and inference (without
// one) call exactly these. This library knows nothing of tapes or models.
//
// Note [Kernel conventions]
// - Tensors are contiguous, row-major float32. Shapes use one vocabulary:
//   B batch, T time, C channels, NH heads, HS = C/NH head size, V vocabulary,
//   N = B*T rows, IC/OC in/out channels. Size products are int64_t.
// - Arguments: outputs first, then const inputs, then sizes.
// - Forward kernels OVERWRITE their outputs.
// - Backward kernels ADD into gradient buffers (names start with `d`), which
//   the caller zeroed once per step. A tensor used twice (the residual
//   stream, a tied embedding) therefore just receives both contributions.
//   A null gradient pointer means "not needed" and that work is skipped.
// - Outputs never alias inputs unless a comment says so.
// - Reductions run in an order fixed by the data sizes alone, never by the
//   thread count, so results are bit-identical for any number of threads
//   (for sgemm see Note [Thread-count-independent sgemm] in matmul.cpp).
// - Weights are stored PyTorch-style: a linear layer's weight is [OC, IC].
#pragma once

#include <cstdint>

#include "autograd/kernels/gelu_kind.h"
#include "autograd/kernels/split_master.h"

namespace kernels {

// ---- linear: out[N,OC] = inp[N,IC] · weight[OC,IC]ᵀ + bias[OC] -------------
// bias may be null. Every matmul goes through OpenBLAS: cblas_sgemm, or cblas_sgemv for one row.
void linear_forward(float* out, const float* inp, const float* weight, const float* bias,
                    int64_t N, int64_t IC, int64_t OC);
// dinp += dout·weight; dweight += doutᵀ·inp; dbias += Σ_n dout[n].
void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                     const float* inp, const float* weight, int64_t N, int64_t IC, int64_t OC);

// ---- embedding: out[b,t,:] = wte[ids[b,t],:] + wpe[t,:] --------------------
// ids must already be validated against V (the caller's job). wpe may be
// null: no position table (RoPE), out = wte rows.
void embedding_forward(float* out, const int32_t* ids, const float* wte, const float* wpe,
                       int64_t B, int64_t T, int64_t C);
// The same from tables that may be split masters (a bf16 run's learned
// tables; split_master.h); an undefined wpe as a null one.
void embedding_forward(float* out, const int32_t* ids, MasterValues wte, MasterValues wpe, int64_t B,
                       int64_t T, int64_t C);
// dwte[ids[b,t]] += dout[b,t]; dwpe[t] += Σ_b dout[b,t]. Either may be null.
void embedding_backward(float* dwte, float* dwpe, const float* dout, const int32_t* ids,
                        int64_t B, int64_t T, int64_t C);

// ---- residual add: out = a + b (n elements) -------------------------------
void add_forward(float* out, const float* a, const float* b, int64_t n);
// dst += src: the backward of add for each input, and of any identity.
void accumulate(float* dst, const float* src, int64_t n);

// ---- LayerNorm over the last dimension, eps 1e-5 ---------------------------
// out = (inp - mean) * rstd * weight + bias; mean[N], rstd[N] are saved for
// backward. bias may be null.
constexpr float kLayerNormEps = 1e-5f;
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp,
                       const float* weight, const float* bias, int64_t N, int64_t C);
// With x̂ = (x - mean)·rstd and g = dout·weight:
//   dinp += rstd · (g - mean_c(g) - x̂ · mean_c(g·x̂)),
//   dweight += Σ_n dout·x̂, dbias += Σ_n dout.
void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                        const float* inp, const float* weight, const float* mean,
                        const float* rstd, int64_t N, int64_t C);

// ---- GELU --------------------------------------------------------------------
// The two kinds (GeluKind, gelu_kind.h), both within a few float32 ulps of
// the double formula (Note [GELU precision]).
void gelu_forward(float* out, const float* inp, int64_t n, GeluKind kind = GeluKind::Tanh);
void gelu_backward(float* dinp, const float* dout, const float* inp, int64_t n,
                   GeluKind kind = GeluKind::Tanh);

// ---- RMSNorm over the last dimension, eps 1e-5 -------------------------------
// out = inp · rstd · weight, rstd[n] = 1/√(mean_c(inp²) + eps), saved for
// backward. No mean is subtracted and there is no bias (Llama's norm).
constexpr float kRMSNormEps = 1e-5f;
void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int64_t N,
                     int64_t C);
// With x̂ = inp·rstd and g = dout·weight:
//   dinp += rstd · (g - x̂ · mean_c(g·x̂)),  dweight += Σ_n dout·x̂.
void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* weight, const float* rstd, int64_t N, int64_t C);
// QK-norm: RMSNorm with no gain of each head's q and of its k in qkv[N,3C]
// (head h: channels h·HS…(h+1)·HS-1 of q and of k), v copied unchanged;
// rstd[N, 2·NH] saved for backward (q heads, then k heads).
void qk_rmsnorm_forward(float* out, float* rstd, const float* qkv, int64_t N, int64_t C, int64_t NH);
// dqkv's q and k parts += rstd · (dout - x̂ · mean_c(dout·x̂)) per head; dv += dout's v part.
void qk_rmsnorm_backward(float* dqkv, const float* dout, const float* qkv, const float* rstd, int64_t N,
                         int64_t C, int64_t NH);

// ---- rotary position embedding (RoPE) on q and k of qkv[B,T,3C] -------------
// Head h owns channels h·HS…(h+1)·HS-1 of q and of k (as the attention
// kernels). Within a head the pairs are (i, i + HS/2) for i < HS/2
// ("rotate_half", as HF Llama and GPT-NeoX), rotated by the angle
// (pos0 + t)·θ_i, θ_i = 10000^(-2i/HS):
//   x' = x·cos - y·sin,  y' = x·sin + y·cos;  v is copied unchanged.
// cos and sin are computed in double, then rounded to float, so results do
// not depend on the libm vector path. out may alias qkv exactly (in place:
// a KV-cache forward rotates its new rows with pos0 = the first's position).
// HS must be even.
void rope_forward(float* out, const float* qkv, int64_t B, int64_t T, int64_t C, int64_t NH,
                  int64_t pos0);
// The rotation is orthogonal, so its backward is its transpose (the angle
// negated): dqkv's q and k parts += the inverse rotation of dout's,
//   dx += dx'·cos + dy'·sin,  dy += -dx'·sin + dy'·cos;  dv += dout's v part.
void rope_backward(float* dqkv, const float* dout, int64_t B, int64_t T, int64_t C, int64_t NH,
                   int64_t pos0);

// ---- ReLU²: out = max(x, 0)² (n elements) -------------------------------------
void relu2_forward(float* out, const float* inp, int64_t n);
// dinp += dout · 2·max(x, 0)
void relu2_backward(float* dinp, const float* dout, const float* inp, int64_t n);

// ---- SwiGLU: inp[N,2H] holds the gate a = inp[n, 0:H] and the value ----------
// b = inp[n, H:2H] side by side; out[N,H] = silu(a)·b, silu(a) = a·σ(a).
void swiglu_forward(float* out, const float* inp, int64_t N, int64_t H);
// silu'(a) = σ(a)·(1 + a·(1 - σ(a))), so
//   da += dout·b·σ(a)·(1 + a·(1 - σ(a))),  db += dout·silu(a),
// written into dinp[N,2H] at the places of a and b.
void swiglu_backward(float* dinp, const float* dout, const float* inp, int64_t N, int64_t H);

// ---- logit soft-capping: out = cap·tanh(inp/cap) (n elements) -----------------
// Squashes the logits smoothly into (-cap, cap) (Gemma 2, modded-nanoGPT,
// nanochat); about the identity for |inp| ≪ cap. Each element to a few ulps
// of its own size, from fast_exp (Note [Softcap precision] in softcap.cpp).
void softcap_forward(float* out, const float* inp, int64_t n, float cap);
// d/dx cap·tanh(x/cap) = 1 - tanh²(x/cap) = 1 - (out/cap)², so
//   dinp += dout·(1 - tanh²(inp/cap)),
// recomputed from inp: the op's output becomes the loss's probabilities. dinp
// may be inp itself: the gradient then replaces it (as if added to a zeroed
// dinp).
void softcap_backward(float* dinp, const float* dout, const float* inp, int64_t n, float cap);

// ---- causal multi-head self-attention --------------------------------------
// Training runs the blockwise pair (attention_flash.h). The naive pair that
// stores every T×T probability map, its test oracle and benchmark baseline,
// is not in this library: attention_naive.h (tapegpt_kernels_naive, linked
// only by tests and by `tapegpt bench --naive-attention`).
//
// One new query per head against a KV cache (inference only): q[C],
// k_cache/v_cache[Tc, C] rows 0…Tc-1 valid (the new token's k, v included),
// out[C]. scratch holds NH*Tc floats. bf16_products: the weights that
// multiply v are rounded to bf16 first, as the bf16 blockwise forward's P·v
// takes them (Note [bf16 attention products] in attention_flash.cpp).
void attention_decode(float* out, float* scratch, const float* q, const float* k_cache,
                      const float* v_cache, int64_t Tc, int64_t C, int64_t NH, bool bf16_products = false);
// The same for T new queries at positions pos0…pos0+T-1, each against the
// cache up to its own position (a prompt read in one pass): q is row t of
// qkv[T,3C] (its first C floats), out[T,C], the cache rows 0…pos0+T-1 valid,
// scratch T*NH*(pos0+T) floats. Every row gets attention_decode's bits, on
// any number of threads.
void attention_decode_rows(float* out, float* scratch, const float* qkv, const float* k_cache,
                           const float* v_cache, int64_t pos0, int64_t T, int64_t C, int64_t NH,
                           bool bf16_products = false);

// ---- softmax + cross-entropy ----------------------------------------------
// probs[N,V] = softmax(logits); losses[N] = -log probs[n, targets[n]].
// probs may alias logits (in-place) to save a [N,V] buffer.
void crossentropy_forward(float* losses, float* probs, const float* logits,
                          const int32_t* targets, int64_t N, int64_t V);
// dlogits[n] += scale · (probs[n] - onehot(targets[n])); the mean loss over N
// rows scaled by dloss uses scale = dloss / N. dlogits may alias probs: the
// gradient then replaces them (as if added to a zeroed dlogits).
void crossentropy_backward(float* dlogits, const float* probs, const int32_t* targets,
                           float scale, int64_t N, int64_t V);
// Plain row-wise softmax (sampling): probs[N,V] = softmax(logits / temperature).
void softmax_forward(float* probs, const float* logits, float temperature, int64_t N, int64_t V);

// ---- dropout (inverted): out = inp · keep / (1 - p) ------------------------
// keep is a counter-based hash of (seed, index), so backward regenerates the
// mask instead of storing it and the result does not depend on threads.
void dropout_forward(float* out, const float* inp, float p, uint64_t seed, int64_t n);
void dropout_backward(float* dinp, const float* dout, float p, uint64_t seed, int64_t n);

// ---- optimizer and gradient utilities over flat buffers ---------------------
// Σ x² accumulated in double over chunks of sum_squares_chunk(n) elements
// (at least 16K, at most kSumSquaresMaxChunks chunks), the chunks' partial
// sums added in chunk order. sum_squares_partials writes the partials of
// chunks [chunk_begin, chunk_end) of the n-element buffer x into partial[],
// so ranks holding different chunks can add them up to the same bits
// (Note [Sharded optimizer state] in train/distributed/optimizer_shard.h).
constexpr int64_t kSumSquaresMaxChunks = 4096;
int64_t sum_squares_chunk(int64_t n);
void sum_squares_partials(double* partial, const float* x, int64_t n, int64_t chunk_begin, int64_t chunk_end);
double sum_squares(const float* x, int64_t n);
void scale_inplace(float* x, float s, int64_t n);
// AdamW as PyTorch, fused with clipping and gradient zeroing so the whole
// optimizer step is one threaded pass over the flat buffers:
//   g = grad·grad_scale (grad_scale < 1 when clipping), then grad = 0;
//   param -= lr·wd·param (decoupled; wd may be 0);
//   m = β1·m + (1-β1)·g,  v = β2·v + (1-β2)·g²;
//   param -= lr·m̂/(√v̂ + eps), m̂ = m/(1-β1^step), v̂ = v/(1-β2^step), step ≥ 1.
void adamw_update(float* param, float* m, float* v, float* grad, int64_t n, float lr,
                  float beta1, float beta2, float eps, float weight_decay, int64_t step,
                  float grad_scale);
// The same on split masters (Note [Split master weights] in split_master.h):
// each weight is read from hi and lo and written back split, so a bf16
// run's copies (hi) are current when the pass returns, with no pass of
// their own.
void adamw_update_split(uint16_t* hi, uint16_t* lo, float* m, float* v, float* grad, int64_t n, float lr,
                        float beta1, float beta2, float eps, float weight_decay, int64_t step,
                        float grad_scale);

// ---- Muon for one weight matrix W[rows, cols] (Note [Muon] in train/optimizer.h)
// Keller Jordan's quintic Newton–Schulz coefficients and iteration count,
// and the eps added to the Frobenius norm.
constexpr float kMuonA = 3.4445f, kMuonB = -4.7750f, kMuonC = 2.0315f;
constexpr int kMuonSteps = 5;
constexpr float kMuonEps = 1e-7f;
// Floats of scratch muon_update needs for a [rows, cols] matrix, and
// newton_schulz for its X[R, K] (R ≤ K): the next X, A = X·Xᵀ and A·A, and
// for newton_schulz_bf16 the bf16 copies of X, A and B as well.
int64_t muon_scratch_floats(int64_t rows, int64_t cols);
int64_t newton_schulz_scratch_floats(int64_t R, int64_t K);
// Muon's first stage, fused with clipping and gradient zeroing as adamw_update:
//   g = grad·grad_scale, then grad = 0;  m = μ·m + g;  u = g + μ·m (Nesterov);
//   x = u / (‖u‖_F + kMuonEps), written as [rows, cols], or transposed as
//   [cols, rows] when rows > cols, so that x is never tall.
void muon_momentum(float* x, float* m, float* grad, int64_t rows, int64_t cols, float momentum,
                   float grad_scale);
// `steps` iterations in place on x[R, K], R ≤ K, every product an sgemm:
//   A = x·xᵀ [R,R];  B = b·A + c·A·A;  x = a·x + B·x,  (a, b, c) = kMuon{A,B,C}.
// Each maps every singular value σ of x to aσ + bσ³ + cσ⁵ and keeps its
// singular vectors: five from ‖x‖_F ≤ 1 leave them near 1 (Note [Muon]).
void newton_schulz(float* x, float* scratch, int64_t R, int64_t K, int steps);
// The same with every product's operands rounded to bf16 and float32 sums
// (Note [bf16 matmuls] in bf16.h): what a bf16 run's Muon does. Needs
// bf16_matmul_available().
void newton_schulz_bf16(float* x, float* scratch, int64_t R, int64_t K, int steps);
// The update: param = param·(1 - lr·wd) - lr·√max(1, rows/cols)·o, o the
// orthogonalised x back in [rows, cols] (transposed again when tall).
void muon_apply(float* param, const float* x, int64_t rows, int64_t cols, float lr,
                float weight_decay);
// The three in order: muon_momentum into the scratch, newton_schulz for
// kMuonSteps, muon_apply. scratch holds muon_scratch_floats(rows, cols).
void muon_update(float* param, float* m, float* grad, float* scratch, int64_t rows, int64_t cols,
                 float lr, float momentum, float weight_decay, float grad_scale);
// A bf16 run's: muon_momentum, newton_schulz_bf16, and muon_apply's update
// on split masters (as adamw_update_split).
void muon_update_split(uint16_t* hi, uint16_t* lo, float* m, float* grad, float* scratch, int64_t rows,
                       int64_t cols, float lr, float momentum, float weight_decay, float grad_scale);

}  // namespace kernels
