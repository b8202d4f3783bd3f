// Naive double-precision kernels: the test oracle. Same math and argument
// conventions as kernels.h (backward ADDS into gradients), written as plain
// loops with no BLAS and no threads, so each is obviously the formula.
// Used only by tests: once to finite-difference check each backward in
// double precision, and as the reference the fast float kernels must match.
#pragma once

#include <cstdint>

#include "autograd/kernels/kernels.h"

namespace kernels::reference {

void linear_forward(double* out, const double* inp, const double* weight, const double* bias,
                    int64_t N, int64_t IC, int64_t OC);
void linear_backward(double* dinp, double* dweight, double* dbias, const double* dout,
                     const double* inp, const double* weight, int64_t N, int64_t IC, int64_t OC);

// bf16 (Note [bf16 matmuls] in bf16.h), written apart from the kernels' bit
// arithmetic: x rounded to 8 significant bits, to nearest with ties to even
// (std::nearbyint in the default rounding mode), on bf16's exponent range:
// spacing 2^-133 below 2^-126 (subnormals), ±Inf past the largest finite
// (2 - 2^-7)·2^127 after rounding; NaN and ±Inf unchanged.
double round_to_bf16(double x);
// The linear pair with both matmul operands rounded to bf16 first, then the
// double linear_forward / linear_backward above (bias and gradients not
// rounded; no bias gradient: it takes no bf16 operand).
void linear_forward_bf16(double* out, const double* inp, const double* weight, const double* bias,
                         int64_t N, int64_t IC, int64_t OC);
void linear_backward_bf16(double* dinp, double* dweight, const double* dout, const double* inp,
                          const double* weight, int64_t N, int64_t IC, int64_t OC);

void embedding_forward(double* out, const int32_t* ids, const double* wte, const double* wpe,
                       int64_t B, int64_t T, int64_t C);
void embedding_backward(double* dwte, double* dwpe, const double* dout, const int32_t* ids,
                        int64_t B, int64_t T, int64_t C);

void layernorm_forward(double* out, double* mean, double* rstd, const double* inp,
                       const double* weight, const double* bias, int64_t N, int64_t C);
void layernorm_backward(double* dinp, double* dweight, double* dbias, const double* dout,
                        const double* inp, const double* weight, const double* mean,
                        const double* rstd, int64_t N, int64_t C);

// std::tanh / std::erf in double: the formulas as written.
void gelu_forward(double* out, const double* inp, int64_t n, GeluKind kind = GeluKind::Tanh);
void gelu_backward(double* dinp, const double* dout, const double* inp, int64_t n,
                   GeluKind kind = GeluKind::Tanh);

// eps 1e-5, as kRMSNormEps.
void rmsnorm_forward(double* out, double* rstd, const double* inp, const double* weight,
                     int64_t N, int64_t C);
void rmsnorm_backward(double* dinp, double* dweight, const double* dout, const double* inp,
                      const double* weight, const double* rstd, int64_t N, int64_t C);

// Angles and their cos and sin in double, never rounded to float.
void rope_forward(double* out, const double* qkv, int64_t B, int64_t T, int64_t C, int64_t NH,
                  int64_t pos0);
void rope_backward(double* dqkv, const double* dout, int64_t B, int64_t T, int64_t C, int64_t NH,
                   int64_t pos0);

void relu2_forward(double* out, const double* inp, int64_t n);
void relu2_backward(double* dinp, const double* dout, const double* inp, int64_t n);

// σ(a) = 1/(1 + e^{-a}) with std::exp.
void swiglu_forward(double* out, const double* inp, int64_t N, int64_t H);
void swiglu_backward(double* dinp, const double* dout, const double* inp, int64_t N, int64_t H);

// cap·tanh(x/cap) with std::tanh; backward dinp += dout·(1 - tanh²(x/cap)),
// as dout/cosh²(x/cap).
void softcap_forward(double* out, const double* inp, int64_t n, double cap);
void softcap_backward(double* dinp, const double* dout, const double* inp, int64_t n, double cap);

// att keeps the undropped probabilities; dropout as Note [Attention dropout].
void attention_forward(double* out, double* att, const double* qkv, int64_t B, int64_t T,
                       int64_t C, int64_t NH, double dropout_p = 0.0, uint64_t seed = 0);
void attention_backward(double* dqkv, const double* dout, const double* qkv, const double* att,
                        int64_t B, int64_t T, int64_t C, int64_t NH, double dropout_p = 0.0,
                        uint64_t seed = 0);

// Row-wise softmax(logits / temperature).
void softmax_forward(double* probs, const double* logits, double temperature, int64_t N,
                     int64_t V);

// Inverted dropout with the kernels' mask (dropout_mask.h): out = inp/(1-p) or 0.
void dropout_forward(double* out, const double* inp, double p, uint64_t seed, int64_t n);
void dropout_backward(double* dinp, const double* dout, double p, uint64_t seed, int64_t n);

void crossentropy_forward(double* losses, double* probs, const double* logits,
                          const int32_t* targets, int64_t N, int64_t V);
void crossentropy_backward(double* dlogits, const double* probs, const int32_t* targets,
                           double scale, int64_t N, int64_t V);

// Muon's stages for W[rows, cols] as kernels.h's muon_* (x never tall), the
// Newton–Schulz coefficients given, so a test can also pass their absolute
// values to get Σ|terms|. newton_schulz runs on x[R, K], R ≤ K, in place.
void muon_momentum(double* x, double* m, const double* grad, int64_t rows, int64_t cols,
                   double momentum, double grad_scale);
void newton_schulz(double* x, int64_t R, int64_t K, int steps, double a, double b, double c);
void muon_apply(double* param, const double* x, int64_t rows, int64_t cols, double lr,
                double weight_decay);
// The three in order: five iterations with the published coefficients.
void muon_update(double* param, double* m, const double* grad, int64_t rows, int64_t cols,
                 double lr, double momentum, double weight_decay, double grad_scale);

}  // namespace kernels::reference
