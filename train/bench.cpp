// Benchmark driver (see bench.h).
#include "train/bench.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "autograd/kernels/attention_flash.h"
#include "autograd/kernels/attention_naive.h"
#include "autograd/kernels/bf16.h"
#include "autograd/kernels/kernels.h"
#include "autograd/base/rng.h"
#include "nn/decode.h"
#include "nn/gpt.h"
#include "train/peak_flops.h"
#include "train/train_step.h"

namespace train {

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median time of fn over a few calls (after one warm-up call).
double time_call(const std::function<void()>& fn, int reps = 5) {
  fn();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    fn();
    t.push_back(seconds(t0));
  }
  return median(t);
}

double measure_bandwidth() {
  const size_t n = size_t{256} << 20;  // 256 MiB each way
  std::vector<char> a(n, 1), b(n);
  double best = 0;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = Clock::now();
    std::memcpy(b.data(), a.data(), n);
    best = std::max(best, 2.0 * static_cast<double>(n) / seconds(t0));  // read + write
  }
  return best + static_cast<double>(b[n / 2]) * 0.0;
}

// Replays every kernel of one training step with the step's shapes and
// returns the time per category. The step itself runs the same kernels, so
// the sum is close to (a little under) the measured step time. In bf16 the
// linear layers replay the bf16 linear op's calls (Note [bf16 linear]):
// the matmuls with bf16 operands, and apart from them the roundings of
// their float32 inputs (forward, and again in backward) and of their output
// gradients, so a run shows what each costs; and attention's rounding of v
// and its rebuilding of qkv for backward (Note [bf16 attention inputs]),
// around the bf16 attention kernels (Note [bf16 attention products]; norms
// and the rest are float32 in both).
std::vector<ProfileEntry> profile_step(const nn::GPTConfig& c, int64_t B, train::Precision precision) {
  const int64_t T = c.block_size, C = c.n_embd, L = c.n_layer, NH = c.n_head, V = c.vocab_size;
  const int64_t N = B * T;
  // Layer widths, linear layers and LayerNorms as the parameter table has them.
  const nn::ParamLayout layout = nn::param_layout(c);
  const int64_t QKV = layout.first(nn::ParamRole::QkvWeight).shape[0];
  const int64_t H = layout.first(nn::ParamRole::MlpUpWeight).shape[0];  // the widest
  int64_t norms = 0;
  for (const nn::ParamInfo& p : layout.table) norms += nn::is_layernorm_weight(p.role);
  tg::Rng rng(1);
  auto buf = [&](int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = static_cast<float>(rng.normal() * 0.1);
    return v;
  };
  std::vector<float> x = buf(N * H), y = buf(N * H), dx = buf(N * H), dy = buf(N * H);
  std::vector<float> w = buf(std::max(H * C, V * C)), dw = buf(std::max(H * C, V * C));
  std::vector<float> logits = buf(N * V), dlogits = buf(N * V), qkv = buf(N * QKV), dqkv = buf(N * QKV);
  std::vector<float> mean = buf(N), rstd = buf(N), lse = buf(B * NH * T);
  std::vector<float> bias = buf(H), dbias = buf(H), losses = buf(N);
  std::vector<int32_t> ids(static_cast<size_t>(N));
  for (auto& id : ids) id = static_cast<int32_t>(rng.below(static_cast<uint64_t>(V)));

  const bool bf16 = precision == train::Precision::Bf16;
  // bf16 copies for the bf16 replay: the weight, an input, an output gradient.
  std::vector<uint16_t> wb, xb, dyb, vb;
  if (bf16) {
    vb.resize(static_cast<size_t>(N * C));
    wb.resize(w.size());
    kernels::round_to_bf16(wb.data(), w.data(), static_cast<int64_t>(w.size()));
    xb.resize(x.size());
    dyb.resize(std::max(dy.size(), dlogits.size()));
  }
  double rounding = 0;  // bf16 only
  // One linear layer [N, IC] -> [N, OC], forward and backward; dy is dout.
  auto linear = [&](float* out, const float* dout, int64_t IC, int64_t OC, const float* b, float* db) {
    if (!bf16)
      return time_call([&] { kernels::linear_forward(out, x.data(), w.data(), b, N, IC, OC); }) +
             time_call([&] { kernels::linear_backward(dx.data(), dw.data(), db, dout, x.data(), w.data(), N, IC, OC); });
    rounding += 2 * time_call([&] { kernels::round_to_bf16(xb.data(), x.data(), N * IC); }) +
                time_call([&] { kernels::round_to_bf16(dyb.data(), dout, N * OC); });
    return time_call([&] { kernels::linear_forward_bf16(out, xb.data(), wb.data(), b, N, IC, OC); }) +
           (db ? time_call([&] { kernels::linear_backward(nullptr, nullptr, db, dout, nullptr, nullptr, N, IC, OC); })
               : 0.0) +
           time_call([&] { kernels::linear_backward_bf16(dx.data(), dw.data(), dyb.data(), xb.data(), wb.data(), N, IC, OC); });
  };
  double matmul = 0;  // each block's linear layers, timed once (block 0's)
  for (const nn::ParamInfo& p : layout.table)
    if (p.layer == 0 && nn::is_block_linear_weight(p.role)) {
      const double once = linear(y.data(), dy.data(), p.shape[1], p.shape[0], bias.data(), dbias.data());
      matmul += static_cast<double>(L) * once;
    }
  if (bf16)
    rounding += time_call([&] { kernels::keep_qkv_v_bf16(dy.data(), vb.data(), dx.data(), qkv.data(), N, C); }) +
                time_call([&] { kernels::widen_kept_qkv(dx.data(), dy.data(), vb.data(), N, C); });
  rounding *= static_cast<double>(L);
  matmul += linear(logits.data(), dlogits.data(), C, V, nullptr, nullptr);
  const auto attention_forward = bf16 ? kernels::attention_flash_forward_bf16 : kernels::attention_flash_forward;
  const auto attention_backward = bf16 ? kernels::attention_flash_backward_bf16 : kernels::attention_flash_backward;
  const double attention = static_cast<double>(L) *
      (time_call([&] { attention_forward(y.data(), lse.data(), qkv.data(), B, T, C, NH, 0.0f, 0); }) +
       time_call([&] { attention_backward(dqkv.data(), dy.data(), y.data(), qkv.data(), lse.data(), B, T, C, NH, 0.0f, 0); }));
  // The norm, activation and position kernels the config runs.
  const bool rms = c.norm == nn::NormKind::RMSNorm;
  const double layernorm = static_cast<double>(norms) *
      (rms ? time_call([&] { kernels::rmsnorm_forward(y.data(), rstd.data(), x.data(), w.data(), N, C); }) +
                 time_call([&] { kernels::rmsnorm_backward(dx.data(), dw.data(), dy.data(), x.data(), w.data(), rstd.data(), N, C); })
           : time_call([&] { kernels::layernorm_forward(y.data(), mean.data(), rstd.data(), x.data(), w.data(), bias.data(), N, C); }) +
                 time_call([&] { kernels::layernorm_backward(dx.data(), dw.data(), dbias.data(), dy.data(), x.data(), w.data(), mean.data(), rstd.data(), N, C); }));
  const int64_t act_in = c.mlp == nn::MlpKind::Swiglu ? H / 2 : H;  // SwiGLU's output is half c_fc's rows
  const double gelu = static_cast<double>(L) *
      (c.mlp == nn::MlpKind::Relu2
           ? time_call([&] { kernels::relu2_forward(y.data(), x.data(), N * H); }) +
                 time_call([&] { kernels::relu2_backward(dx.data(), dy.data(), x.data(), N * H); })
       : c.mlp == nn::MlpKind::Swiglu
           ? time_call([&] { kernels::swiglu_forward(y.data(), x.data(), N, act_in); }) +
                 time_call([&] { kernels::swiglu_backward(dx.data(), dy.data(), x.data(), N, act_in); })
           : time_call([&] { kernels::gelu_forward(y.data(), x.data(), N * H); }) +
                 time_call([&] { kernels::gelu_backward(dx.data(), dy.data(), x.data(), N * H); })) +
      (c.pos_encoding == nn::PosEncoding::Rope
           ? static_cast<double>(L) *
                 (time_call([&] { kernels::rope_forward(qkv.data(), qkv.data(), B, T, C, NH, 0); }) +
                  time_call([&] { kernels::rope_backward(dqkv.data(), qkv.data(), B, T, C, NH, 0); }))
           : 0.0);
  const double softmax = time_call([&] { kernels::crossentropy_forward(losses.data(), dlogits.data(), logits.data(), ids.data(), N, V); }) +
                         time_call([&] { kernels::crossentropy_backward(logits.data(), dlogits.data(), ids.data(), 1.0f / N, N, V); });
  const double other = time_call([&] { kernels::embedding_forward(y.data(), ids.data(), w.data(), w.data(), B, T, C); }) +
                       time_call([&] { kernels::embedding_backward(dw.data(), dw.data(), dy.data(), ids.data(), B, T, C); }) +
                       static_cast<double>(2 * L) * (time_call([&] { kernels::add_forward(y.data(), x.data(), dx.data(), N * C); }) +
                                                     2 * time_call([&] { kernels::accumulate(dx.data(), dy.data(), N * C); }));
  std::vector<ProfileEntry> entries{
      {bf16 ? "matmul, bf16 (linear layers + lm_head)" : "matmul (linear layers + lm_head)", matmul}};
  if (bf16) entries.push_back({"rounding to bf16 (inputs, out grads, v)", rounding});
  entries.insert(entries.end(), {{"attention", attention},
                                 {rms ? "rmsnorm" : "layernorm", layernorm},
                                 {std::string(c.mlp == nn::MlpKind::Relu2    ? "relu2"
                                              : c.mlp == nn::MlpKind::Swiglu ? "swiglu"
                                                                             : "gelu") +
                                      (c.pos_encoding == nn::PosEncoding::Rope ? " + rope" : ""),
                                  gelu},
                                 {"softmax/cross-entropy", softmax},
                                 {"embedding + residual adds", other}});
  return entries;
}

// --naive-attention: one layer's attention, forward + backward, with each
// kernel pair called directly at the step's shapes (the training step always
// runs the blockwise one), and the floats each keeps for backward.
AttentionKernels compare_attention_kernels(const nn::GPTConfig& c, int64_t B) {
  const int64_t T = c.block_size, C = c.n_embd, NH = c.n_head, N = B * T;
  tg::Rng rng(3);
  auto buf = [&](int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = static_cast<float>(rng.normal() * 0.1);
    return v;
  };
  std::vector<float> qkv = buf(N * 3 * C), dqkv = buf(N * 3 * C), out = buf(N * C), dout = buf(N * C);
  std::vector<float> lse = buf(B * NH * T), att = buf(B * NH * T * T), scratch = buf(B * NH * T * T);
  AttentionKernels k;
  k.blockwise_seconds =
      time_call([&] { kernels::attention_flash_forward(out.data(), lse.data(), qkv.data(), B, T, C, NH); }) +
      time_call([&] { kernels::attention_flash_backward(dqkv.data(), dout.data(), out.data(), qkv.data(), lse.data(), B, T, C, NH); });
  k.naive_seconds =
      time_call([&] { kernels::attention_naive_forward(out.data(), att.data(), qkv.data(), B, T, C, NH); }) +
      time_call([&] { kernels::attention_naive_backward(dqkv.data(), scratch.data(), dout.data(), qkv.data(), att.data(), B, T, C, NH); });
  k.blockwise_saved_bytes = B * NH * T * 4;      // each row's log-sum-exp
  k.naive_saved_bytes = B * NH * T * T * 4;      // every probability
  k.naive_scratch_bytes = B * NH * T * T * 4;    // backward's T×T scratch
  return k;
}

// Uniform random tokens, inputs and targets drawn in turn: bench measures
// speed, and no data file is needed.
class UniformTokens : public BatchSource {
 public:
  UniformTokens(int64_t vocab_size, int64_t n) : V_(static_cast<uint64_t>(vocab_size)), n_(n) {}
  void fill(int32_t* inputs, int32_t* targets, tg::Rng& rng) override {
    for (int64_t i = 0; i < n_; ++i) {
      inputs[i] = static_cast<int32_t>(rng.below(V_));
      targets[i] = static_cast<int32_t>(rng.below(V_));
    }
  }

 private:
  uint64_t V_;
  int64_t n_;
};

}  // namespace

BenchResult run_bench(const BenchOptions& o) {
  const nn::GPTConfig& c = o.model;
  const int64_t B = o.batch_size, T = c.block_size;
  BenchResult r;
  r.sgemm_peak_flops = measure_sgemm_peak_flops();

  nn::GPT model = nn::gpt_create(c);
  nn::gpt_init(model, 1);
  set_precision(model.store, o.precision);
  tg::Rng rng(2);
  UniformTokens batches(c.vocab_size, B * T);
  TrainStep step(model, StepShape{B, T, o.grad_accum});
  std::unique_ptr<Muon> muon;
  if (o.optimizer == OptimizerKind::Muon) {
    muon = std::make_unique<Muon>(model.store, o.muon, o.muon_lr);
    step.set_muon(muon.get());
  }
  std::vector<double> step_times, opt_times;
  for (int64_t s = 0; s < o.warmup + o.steps; ++s) {
    // The trainer's step (train_step.cpp), on synthetic tokens at a fixed
    // small rate (the tokens must not drive the weights anywhere odd).
    const auto t0 = Clock::now();
    const float lr = static_cast<float>(o.optimizer == OptimizerKind::Muon ? 1e-3 * o.muon_lr : 1e-4);
    const StepResult sr = step.run(batches, rng, AdamWConfig{}, lr, s + 1);
    const double seconds_step = seconds(t0);
    if (s >= o.warmup) {
      step_times.push_back(seconds_step);
      opt_times.push_back(sr.optimizer_seconds);
    }
  }
  r.step_seconds = median(step_times);
  r.optimizer_seconds = median(opt_times);
  r.tokens_per_s = static_cast<double>(B * T * o.grad_accum) / r.step_seconds;
  r.model_flops_per_s = r.tokens_per_s * nn::training_flops_per_token(c);
  r.parameter_bytes = model.store.total * 4;
  r.gradient_bytes = r.parameter_bytes;
  r.moment_bytes = 2 * r.parameter_bytes;
  r.activation_bytes = step.arena().capacity_floats() * 4;
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  r.peak_rss_bytes = static_cast<int64_t>(ru.ru_maxrss) * 1024;

  if (o.profile) {
    r.profile = profile_step(c, B, o.precision);  // one micro-batch's kernels
    for (ProfileEntry& e : r.profile) e.seconds *= static_cast<double>(o.grad_accum);
    r.profile.push_back({o.optimizer == OptimizerKind::Muon ? "optimizer (clip norm + Muon/AdamW + zero)"
                                                            : "optimizer (clip norm + AdamW + zero)",
                         r.optimizer_seconds});
  }
  if (o.naive_attention) r.attention = compare_attention_kernels(c, B);
  if (o.sample_tokens > 0) {
    // Room for prompt + new tokens without cropping (as PyTorch's loop in
    // bench_torch.py); the context length does not change the work per token.
    nn::GPTConfig sc = c;
    sc.block_size = std::max(c.block_size, o.prompt_tokens + o.sample_tokens);
    nn::GPT smodel = nn::gpt_create(sc);
    nn::gpt_init(smodel, 3);
    set_precision(smodel.store, o.precision);
    nn::Decoder dec(smodel);
    std::vector<int32_t> prompt(static_cast<size_t>(o.prompt_tokens));
    for (int64_t i = 0; i < o.prompt_tokens; ++i) prompt[static_cast<size_t>(i)] = static_cast<int32_t>(i % c.vocab_size);
    if (!prompt.empty()) dec.feed(prompt);
    const auto t0 = Clock::now();
    int32_t next = 0;
    for (int64_t i = 0; i < o.sample_tokens; ++i) {
      const float* logits = dec.step(next);
      next = static_cast<int32_t>(std::max_element(logits, logits + c.vocab_size) - logits);
    }
    r.sample_tokens_per_s = static_cast<double>(o.sample_tokens) / seconds(t0);
    // A bf16 run's matmuls read the weights' bf16 copies: two bytes each.
    r.weight_bytes = static_cast<double>(smodel.num_parameters()) * (o.precision == train::Precision::Bf16 ? 2.0 : 4.0);
    r.memory_bandwidth = measure_bandwidth();
  }
  return r;
}

}  // namespace train
