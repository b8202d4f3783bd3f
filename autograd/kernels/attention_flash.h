// Blockwise ("flash") causal multi-head attention: the same function as the
// naive pair in attention_naive.h, computed without any T×T matrix.
// Same layout and Note [Kernel conventions] as kernels.h.
#pragma once

#include <cstdint>

namespace kernels {

// Note [Flash attention]
// qkv[B,T,3C] holds q, k, v side by side; head h owns channels h·HS…(h+1)·HS-1
// of each; scale = 1/√HS; s[t,j] = q_t·k_j·scale for j ≤ t (the future is
// masked). Instead of saving att[B,NH,T,T], the forward saves one number per
// row, lse[b,h,t] = log Σ_{j≤t} exp(s[t,j]), and the backward recomputes
// P[t,j] = exp(s[t,j] - lse[t]) block by block. Memory is O(B·T·C) and key
// blocks entirely above the diagonal are never touched (half the work).
// Neither kernel needs scratch: block buffers live on the stack (at most
// 48 KB per thread; 72 KB in the bf16 backward, which also packs a head's
// operands into a buffer of its thread's, Note [bf16 attention products])
// and gradients accumulate straight into dqkv.
// At long contexts the naive kernels hold T×T per head (1.6 GB at B=12,
// C=192, NH=4, T=2048, att + scratch) against 0.4 MB of lse here;
// scripts/bench_attention.sh times both and prints what each keeps.
// Results are bit-identical for any thread count: a task's sums run over
// blocks in a fixed order and no two tasks write the same element.
//
// Note [Attention dropout]
// As nanoGPT's attn_dropout: with probability p each normalised probability
// P[t,j] is zeroed and the rest are scaled by 1/(1-p) before the product
// with v. The mask is dropout_keep(seed, ((b·NH + h)·T + t)·T + j), a pure
// function of the position (dropout_mask.h), so the forward, the backward
// and the naive kernel all see the same mask whatever the blocking or the
// thread count, and nothing is stored. The log-sum-exp stays that of the
// undropped row. Backward: with M the mask and k = 1/(1-p),
//   dv += (P⊙M·k)ᵀ·dout,  dS = P ⊙ (dP⊙M·k - D),  D_t = Σ_i dout[t,i]·out[t,i]
// (out is the dropped output, so D is still Σ_j P·(dP⊙M·k)). p = 0 is exactly
// the kernel without dropout.

// out[B,T,C] as attention_naive_forward; lse[B,NH,T] saved for the backward.
// dropout_p, seed: Note [Attention dropout] (0: none).
void attention_flash_forward(float* out, float* lse, const float* qkv, int64_t B, int64_t T,
                             int64_t C, int64_t NH, float dropout_p = 0.0f, uint64_t seed = 0);

// With P = exp(s - lse), dP = dout·vᵀ and D_t = Σ_i dout[t,i]·out[t,i]
// (= Σ_j P[t,j]·dP[t,j], the softmax's row dot product):
//   dS = P ⊙ (dP - D),  dq += dS·k·scale,  dk += dSᵀ·q·scale,  dv += Pᵀ·dout.
// out and lse are exactly what attention_flash_forward wrote. dqkv[B,T,3C] is
// added to (the caller zeroed it); null skips the work.
// dropout_p and seed must be the forward's.
void attention_flash_backward(float* dqkv, const float* dout, const float* out,
                              const float* qkv, const float* lse, int64_t B, int64_t T,
                              int64_t C, int64_t NH, float dropout_p = 0.0f, uint64_t seed = 0);

// The same two with bf16 operands in every product but the scores q·kᵀ,
// summed in float32 (Note [bf16 attention products] in attention_flash.cpp):
// what a bf16 run trains with. Same arguments, buffers and bit-for-bit
// independence of the thread count.
void attention_flash_forward_bf16(float* out, float* lse, const float* qkv, int64_t B, int64_t T,
                                  int64_t C, int64_t NH, float dropout_p = 0.0f, uint64_t seed = 0);
void attention_flash_backward_bf16(float* dqkv, const float* dout, const float* out,
                                   const float* qkv, const float* lse, int64_t B, int64_t T,
                                   int64_t C, int64_t NH, float dropout_p = 0.0f, uint64_t seed = 0);

// The probabilities themselves, for looking at (tapegpt attention):
// att[b,h,t,j] ∝ exp(q_t·k_j·scale - lse[b,h,t]) for j ≤ t and exactly 0
// above the diagonal, with lse what attention_flash_forward saved — the
// numbers the backward recomputes, each row divided by its sum so that it
// sums to 1 up to float rounding (Note [Renormalised probabilities] in the
// .cpp). att holds B·NH·T·T floats.
void attention_flash_probs(float* att, const float* qkv, const float* lse, int64_t B,
                           int64_t T, int64_t C, int64_t NH);

}  // namespace kernels
