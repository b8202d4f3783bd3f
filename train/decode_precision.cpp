// Measuring generation in each precision (see decode_precision.h).
#include "train/decode_precision.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "autograd/kernels/bf16.h"
#include "nn/decode.h"

namespace train {

namespace {

// Seconds a one-token pass takes in `p`: the fastest of up to 15 (noise
// only adds; at most about 30 ms of them, at least 3), after one untimed
// pass (oneDNN's primitives for the new shapes, first touches).
double seconds_per_token(nn::GPT& model, Precision p) {
  using Clock = std::chrono::steady_clock;
  set_precision(model.store, p);
  nn::Decoder decoder(model);
  decoder.step(0);
  double fastest = 1e30, spent = 0;
  for (int i = 0; i < 15 && (i < 3 || spent < 0.03); ++i) {
    const auto t0 = Clock::now();
    decoder.step(static_cast<int32_t>(i % model.config.vocab_size));
    const double t = std::chrono::duration<double>(Clock::now() - t0).count();
    fastest = std::min(fastest, t);
    spent += t;
  }
  return fastest;
}

std::string ms(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g ms", 1e3 * seconds);
  return text;
}

}  // namespace

PrecisionChoice choose_decode_precision(nn::GPT& model, Precision trained, int64_t new_tokens) {
  PrecisionChoice c = precision_for_checkpoint("auto", trained);
  if (!kernels::bf16_matmul_available() || new_tokens < kDecodeMeasureFrom) {
    set_precision(model.store, c.precision);
    return c;
  }
  const double own = seconds_per_token(model, trained);
  const Precision other = trained == Precision::Bf16 ? Precision::Fp32 : Precision::Bf16;
  const double theirs = seconds_per_token(model, other);
  const bool switch_over = theirs * kDecodeMinSpeedup <= own;
  c.precision = switch_over ? other : trained;
  c.measured_speedup = own / theirs;
  c.reason = std::string("auto: a token measured ") + ms(own) + " in " + precision_name(trained) +
             " (the checkpoint's), " + ms(theirs) + " in " + precision_name(other) +
             (switch_over ? ": the faster" : ": not 1.1× faster, so the checkpoint's");
  set_precision(model.store, c.precision);
  return c;
}

}  // namespace train
