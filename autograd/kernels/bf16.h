// bfloat16 kernels: rounding float32 to bf16, and the linear layer's three
// matmuls with bf16 operands and float32 accumulation and outputs (oneDNN),
// plus what the CPU and oneDNN offer for them (AMX). Conventions as Note
// [Kernel conventions] in kernels.h.
//
// Note [bf16 matmuls]
// - A bf16 value is stored as uint16_t: the upper 16 bits of a float32 (sign,
//   8 exponent bits, 7 mantissa bits), so widening is a shift and float
//   code reads it back exactly (bf16_to_float).
// - Operands are bf16, rounded from float32 to nearest, ties to even, by
//   float_to_bf16 (a weight's bf16 copy is half of its split master,
//   written by the optimizer's pass: adamw_update_split and
//   muon_update_split in kernels.h, split_master.h). Products of
//   two bf16 values are exact in float32
//   (8 + 8 significant bits ≤ 24), so a bf16 matmul's only error beyond the
//   operands' rounding is the float32 summation: the same bound as the
//   float32 kernels' (Note [Tolerances from float32 rounding] in
//   tests/autograd/test_kernels_vs_reference.cpp).
// - Outputs, the bias and gradients are float32; backward ADDS (beta 1).
// - Thread-count independence, as Note [Thread-count-independent sgemm] for
//   sgemm: oneDNN picks its blocking and its split of the summed dimension
//   from the thread count, and its Aᵀ·B form (the weight gradient) gave other
//   bits at 2 threads than at 1 for some GPT shapes (issue 22). So every
//   oneDNN call here runs on one thread, on a piece of the output whose
//   bounds depend only on the matrix shape, and the pieces run in parallel
//   on our OpenMP threads: every thread count makes the same calls on the
//   same pieces and gets the same bits.
// - Primitives are made once per piece shape and kept, with their memory
//   objects, in a small per-thread cache (matmul_bf16.cpp) whose primitives
//   share the thread's one scratchpad, sized for the largest: after the
//   first call of a shape on a thread, a call allocates nothing of ours.
//   oneDNN 2.6.3 itself still allocates inside each execution (about 14
//   small blocks per call here), counted apart by tests/nn/test_no_alloc.cpp.
// - Without oneDNN at build time (CMake says so), or on a CPU without
//   AVX-512 (oneDNN 2.6 has no bf16 matmul there, not even a slow one),
//   bf16_matmul_available() is false and the matmuls must not be called.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace kernels {

// The float32 value of one bf16 (exact).
inline float bf16_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// x rounded to bf16, to nearest with ties to even, on the bits: adding
// 0x7fff plus the lowest kept bit carries into the kept half exactly when the
// dropped half is above one half, or is one half and the kept half is odd.
// The carry may run into the exponent (the next binade, or Inf past bf16's
// largest): both right. NaN is kept apart, since the addition could carry its
// payload into Inf; setting the top mantissa bit keeps it a (quiet) NaN.
// Inline, so the optimizer's pass can write a weight's bf16 copy as it
// writes the weight (train/optimizer.h). On the float's bits u:
inline uint16_t float_bits_to_bf16(uint32_t u) {
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (u >> 16) | 0x40u;
  return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
}
inline uint16_t float_to_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return float_bits_to_bf16(u);
}

// out[i] = in[i] rounded to bf16, to nearest with ties to even; ±Inf stay,
// finite values past bf16's largest round to ±Inf, subnormals round as
// subnormals (never flushed), NaN stays NaN (made quiet, sign kept).
void round_to_bf16(uint16_t* out, const float* in, int64_t n);
// The same over the floats themselves: buf's first 2n bytes become the n
// bf16 values (returned, as buf), the rest is left as it was. For a buffer
// nobody reads again as float32 (an output gradient in its producer's
// backward), so its bf16 copy needs no memory of its own.
uint16_t* round_to_bf16_in_place(float* buf, int64_t n);
// x[i] = x[i] rounded to bf16 as round_to_bf16 rounds it, kept as float32:
// the value a kernel reading round_to_bf16's output would see.
void round_through_bf16(float* x, int64_t n);

// ---- attention's input in a bf16 run (Note [bf16 attention inputs] in
// autograd/ops/attention.cpp); qkv[N,3C] holds each row's q, k and v.
// Keeps qk[N,2C] = each row's q and k as they are and v_bf16[N,C] = its v
// rounded to bf16, and writes wide[N,3C] = q, k and the rounded v in float32,
// what the attention kernels read.
void keep_qkv_v_bf16(float* qk, uint16_t* v_bf16, float* wide, const float* qkv, int64_t N, int64_t C);
// wide[N,3C] again, from what keep_qkv_v_bf16 kept: the same floats.
void widen_kept_qkv(float* wide, const float* qk, const uint16_t* v_bf16, int64_t N, int64_t C);

// ---- linear with bf16 operands: out[N,OC] = inp[N,IC] · weight[OC,IC]ᵀ + bias[OC]
// bias (float32) may be null; the sum is float32.
void linear_forward_bf16(float* out, const uint16_t* inp, const uint16_t* weight, const float* bias,
                         int64_t N, int64_t IC, int64_t OC);
// The same from a float32 input, which is rounded into inp_bf16 [N,IC]
// first: the forward of the bf16 linear op.
void linear_forward_bf16_rounding(float* out, const float* inp, uint16_t* inp_bf16, const uint16_t* weight,
                                  const float* bias, int64_t N, int64_t IC, int64_t OC);
// dinp[N,IC] += dout·weight; dweight[OC,IC] += doutᵀ·inp. Either may be null.
// The bias gradient needs no matmul and no rounding: Σ_n dout[n] in float32
// by linear_backward(nullptr, nullptr, dbias, dout, ...) in kernels.h.
void linear_backward_bf16(float* dinp, float* dweight, const uint16_t* dout, const uint16_t* inp,
                          const uint16_t* weight, int64_t N, int64_t IC, int64_t OC);

// ---- oneDNN's own rate, for `tapegpt bench --bf16-rate` only
// The same products, each one oneDNN call on the whole matrices in plain
// layouts on oneDNN's own threads (OpenMP's team), as issue 22 measured
// oneDNN: the reference the pieces above are measured against, since
// oneDNN may pick another implementation for a piece (a piece of a wider
// matrix has strided rows). Their bits depend on the thread count: never
// for training.
void linear_forward_bf16_whole_call(float* out, const uint16_t* inp, const uint16_t* weight, const float* bias,
                                    int64_t N, int64_t IC, int64_t OC);
void linear_backward_bf16_whole_call(float* dinp, float* dweight, const uint16_t* dout, const uint16_t* inp,
                                     const uint16_t* weight, int64_t N, int64_t IC, int64_t OC);

// ---- what runs the bf16 matmuls here ------------------------------------------
// Whether the matmuls above can run: this build has oneDNN and oneDNN makes
// a bf16 matmul on this CPU (AVX-512 or better, as capped by ONEDNN_MAX_CPU_ISA).
bool bf16_matmul_available();
// oneDNN's version ("2.6.3"), or "none" without oneDNN.
std::string dnnl_version();
// The instruction set oneDNN dispatches to, as ONEDNN_MAX_CPU_ISA spells it
// ("avx512_core_amx", "avx512_core_bf16", "avx2", ...; capped by that
// variable), or "none" without oneDNN.
std::string dnnl_effective_isa();
// The oneDNN implementations the bf16 matmuls above have run in this
// process, distinct and sorted, as oneDNN names them (impl_info_str, the
// name ONEDNN_VERBOSE prints: "brg:avx512_core_bf16" on a Zen 4, a name
// with "amx" in it on AMX); empty before the first call or without oneDNN.
std::vector<std::string> bf16_matmul_kernels();
// The same for the whole calls above.
std::vector<std::string> bf16_whole_call_kernels();
// CPUID says the CPU has AMX-BF16 (and AMX tiles).
bool cpu_has_amx_bf16();
// The kernel lets this process use AMX tile data (Linux arch_prctl
// ARCH_REQ_XCOMP_PERM for XTILEDATA; granted once per process, as oneDNN
// itself asks). False on failure: no AMX.
bool os_permits_amx();
// All of: oneDNN is here and dispatches to AMX (not capped below it by
// ONEDNN_MAX_CPU_ISA), the CPU has AMX-BF16 and the kernel permits its
// tiles (issue 22 measured 3.4-9× sgemm there).
bool amx_bf16_usable();
// oneDNN runs bf16 dot products in hardware here: its effective ISA (as
// capped by ONEDNN_MAX_CPU_ISA) is avx512_core_bf16 (AVX512_BF16: AMD Zen 4
// and later, Intel Cooper Lake and later) or avx512_core_amx. A bf16 speed
// measured there is a result for every CPU with that ISA (issue 38: about
// 1.9× sgemm on a Zen 4); below it (avx512_core) oneDNN emulates bf16, at
// about 0.2× sgemm on an Intel Xeon, and a bf16 speed is no result.
bool bf16_native();

}  // namespace kernels
