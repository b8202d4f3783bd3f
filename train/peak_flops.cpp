// sgemm rate measurements (see peak_flops.h).
#include "train/peak_flops.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "autograd/kernels/bf16.h"
#include "autograd/kernels/kernels.h"

namespace train {

namespace {

// Seconds for one n³ product C = A·B (row-major, no transposes).
double time_sgemm(int n, const float* a, const float* b, float* c) {
  const auto t0 = std::chrono::steady_clock::now();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Median seconds of `reps` calls of f after one untimed call.
double median_seconds(const std::function<void()>& f, int reps) {
  f();
  std::vector<double> s;
  for (int rep = 0; rep < reps; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

}  // namespace

double measure_sgemm_peak_flops() {
  const int n = 1024;
  std::vector<float> a(static_cast<size_t>(n) * n, 0.5f), b(a.size(), 0.25f), c(a.size());
  double best = 0.0;
  for (int rep = 0; rep < 4; ++rep) {
    const double s = time_sgemm(n, a.data(), b.data(), c.data());
    if (rep > 0) best = std::max(best, 2.0 * n * n * n / s);  // the first call warms up
  }
  return best;
}

std::vector<SgemmRate> measure_sgemm_rates(const std::vector<int>& sizes, int reps) {
  std::vector<SgemmRate> rates;
  for (const int n : sizes) {
    std::vector<float> a(static_cast<size_t>(n) * n, 0.5f), b(a.size(), 0.25f), c(a.size());
    time_sgemm(n, a.data(), b.data(), c.data());  // warm-up: page faults, OpenBLAS's buffers
    std::vector<double> rate;
    for (int rep = 0; rep < reps; ++rep)
      rate.push_back(2.0 * n * n * n / time_sgemm(n, a.data(), b.data(), c.data()));
    std::sort(rate.begin(), rate.end());
    rates.push_back({n, rate[rate.size() / 2]});
  }
  return rates;
}

std::vector<Bf16Rate> measure_bf16_rates(int reps) {
  std::vector<Bf16Rate> rates = {{"GPT-2 qkv", 512, 768, 2304},
                                 {"GPT-2 MLP up", 512, 768, 3072},
                                 {"GPT-2 MLP down", 512, 3072, 768},
                                 {"GPT-2 lm_head", 256, 768, 50257},
                                 {"M qkv", 1024, 384, 1152}};
  for (Bf16Rate& r : rates) {
    const int64_t N = r.rows, IC = r.IC, OC = r.OC;
    std::vector<float> inp(N * IC, 0.5f), w(OC * IC, 0.25f), dout(N * OC, 0.125f), out(N * OC), dinp(N * IC),
        dw(OC * IC);
    std::vector<uint16_t> binp(inp.size()), bw(w.size()), bdout(dout.size());
    kernels::round_to_bf16(binp.data(), inp.data(), N * IC);
    kernels::round_to_bf16(bw.data(), w.data(), OC * IC);
    kernels::round_to_bf16(bdout.data(), dout.data(), N * OC);
    const double flops = 2.0 * N * IC * OC;
    const std::function<void()> bf16[3] = {
        [&] { kernels::linear_forward_bf16(out.data(), binp.data(), bw.data(), nullptr, N, IC, OC); },
        [&] { kernels::linear_backward_bf16(dinp.data(), nullptr, bdout.data(), binp.data(), bw.data(), N, IC, OC); },
        [&] { kernels::linear_backward_bf16(nullptr, dw.data(), bdout.data(), binp.data(), bw.data(), N, IC, OC); }};
    const std::function<void()> whole[3] = {
        [&] { kernels::linear_forward_bf16_whole_call(out.data(), binp.data(), bw.data(), nullptr, N, IC, OC); },
        [&] {
          kernels::linear_backward_bf16_whole_call(dinp.data(), nullptr, bdout.data(), binp.data(), bw.data(), N, IC,
                                                   OC);
        },
        [&] {
          kernels::linear_backward_bf16_whole_call(nullptr, dw.data(), bdout.data(), binp.data(), bw.data(), N, IC,
                                                   OC);
        }};
    const std::function<void()> fp32[3] = {
        [&] { kernels::linear_forward(out.data(), inp.data(), w.data(), nullptr, N, IC, OC); },
        [&] { kernels::linear_backward(dinp.data(), nullptr, nullptr, dout.data(), inp.data(), w.data(), N, IC, OC); },
        [&] { kernels::linear_backward(nullptr, dw.data(), nullptr, dout.data(), inp.data(), w.data(), N, IC, OC); }};
    for (int form = 0; form < 3; ++form) {
      r.bf16_flops[form] = flops / median_seconds(bf16[form], reps);
      r.bf16_whole_call_flops[form] = flops / median_seconds(whole[form], reps);
      r.fp32_flops[form] = flops / median_seconds(fp32[form], reps);
    }
  }
  return rates;
}

double measure_bf16_speedup(int64_t rows, int64_t C, int reps) {
  // One thread: on a busy machine a team of threads waits at its barriers
  // for whichever member lost its core, which distorts small float32 calls
  // far more than bf16 ones; a lone thread's best time is the kernels' own.
  struct OneThread {
    int saved = omp_get_max_threads();
    OneThread() { omp_set_num_threads(1); }
    ~OneThread() { omp_set_num_threads(saved); }
  } one_thread;
  const int64_t N = std::min<int64_t>(std::max<int64_t>(rows, 1), 128), H = 4 * C;
  // One buffer set serves both layers: inputs of width up to H, outputs too.
  std::vector<float> inp(N * H, 0.5f), w(H * C, 0.25f), dout(N * H, 0.125f), out(N * H), dinp(N * H), dw(H * C);
  std::vector<uint16_t> binp(inp.size()), bw(w.size()), bdout(dout.size());
  kernels::round_to_bf16(binp.data(), inp.data(), N * H);
  kernels::round_to_bf16(bw.data(), w.data(), H * C);
  kernels::round_to_bf16(bdout.data(), dout.data(), N * H);
  auto fp32_layer = [&](int64_t IC, int64_t OC) {
    kernels::linear_forward(out.data(), inp.data(), w.data(), nullptr, N, IC, OC);
    kernels::linear_backward(dinp.data(), dw.data(), nullptr, dout.data(), inp.data(), w.data(), N, IC, OC);
  };
  auto bf16_layer = [&](int64_t IC, int64_t OC) {
    kernels::linear_forward_bf16(out.data(), binp.data(), bw.data(), nullptr, N, IC, OC);
    kernels::linear_backward_bf16(dinp.data(), dw.data(), bdout.data(), binp.data(), bw.data(), N, IC, OC);
  };
  auto seconds = [](const std::function<void()>& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const std::function<void()> fp32 = [&] { fp32_layer(C, H); fp32_layer(H, C); };
  const std::function<void()> bf16 = [&] { bf16_layer(C, H); bf16_layer(H, C); };
  fp32();  // warm-up: oneDNN makes its primitives, OpenBLAS its buffers
  bf16();
  double best_fp32 = 1e30, best_bf16 = 1e30;
  for (int rep = 0; rep < reps; ++rep) {
    best_fp32 = std::min(best_fp32, seconds(fp32));
    best_bf16 = std::min(best_bf16, seconds(bf16));
  }
  return best_fp32 / best_bf16;
}

}  // namespace train
