// `tapegpt bench`: training-step throughput, memory, a per-kernel time
// profile and KV-cache sampling speed for one model shape (driven by
// scripts/bench.sh, which also runs PyTorch side by side).
#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "autograd/kernels/bf16.h"
#include "autograd/kernels/blas_setup.h"
#include "autograd/planner.h"
#include "nn/gpt.h"
#include "nn/params.h"
#include "train/bench.h"
#include "train/budget/plan.h"
#include "train/cli/cli_util.h"
#include "train/cli/train_flag_options.h"
#include "train/cli/commands.h"
#include "train/peak_flops.h"
#include "train/precision.h"
#include "train/presets.h"
#include "train/train_flags.h"

namespace cli {

namespace {

nn::GPTConfig bench_shape(const std::string& name, int64_t* batch) {
  // The comparison shapes of BENCHMARKS.md (vocab, T, layers, heads, width) and batch.
  if (name == "S") { *batch = 8; return train::make_config(65, 128, 4, 4, 256); }
  if (name == "M") { *batch = 8; return train::make_config(65, 256, 6, 6, 384); }
  if (name == "G") { *batch = 4; return train::make_config(50257, 64, 12, 12, 768); }
  if (const train::Preset* p = train::find_preset(name)) { *batch = 8; return p->config; }
  throw tg::UsageError("unknown --shape '" + name + "'; use S, M, G or a preset (demo, gpt2-small, ...)");
}

double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// A figure with two decimals, or null for one that was not measured.
std::string json_number_or_null(bool measured, double value) {
  if (!measured) return "null";
  char text[64];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

// A JSON array of strings (nlohmann-json escapes them).
std::string json_strings(const std::vector<std::string>& names) { return nlohmann::json(names).dump(); }

// A profile category's JSON key: its first word ("softmax/cross-entropy" -> "softmax").
std::string profile_key(const std::string& category) {
  return category.substr(0, static_cast<size_t>(
      std::find_if(category.begin(), category.end(), [](char ch) { return !std::isalnum(static_cast<unsigned char>(ch)); }) -
      category.begin()));
}

// `--sgemm-rate`: OpenBLAS's own rate on square matrices, the ceiling
// scripts/bench.sh divides both sides' model FLOP rates by.
int print_sgemm_rate(bool json) {
  const std::vector<train::SgemmRate> rates = train::measure_sgemm_rates();
  double best = 0;
  for (const train::SgemmRate& r : rates) best = std::max(best, r.median_flops);
  if (json) {
    std::printf("{\"sgemm_rate_gflops\":%.2f,\"sgemm_gflops_by_size\":{", best / 1e9);
    for (size_t i = 0; i < rates.size(); ++i)
      std::printf("%s\"%d\":%.2f", i ? "," : "", rates[i].n, rates[i].median_flops / 1e9);
    std::printf("},\"threads\":%d,\"blas_core\":\"%s\",\"blas_build\":\"%s\",\"blas_split\":%s}\n",
                omp_get_max_threads(), kernels::blas_core_name(), kernels::blas_build_name(),
                kernels::blas_split_in_kernels() ? "true" : "false");
    return 0;
  }
  std::printf("OpenBLAS sgemm, %d threads (%s), median of 7 calls per size:\n", omp_get_max_threads(),
              kernels::blas_description().c_str());
  for (const train::SgemmRate& r : rates) std::printf("  %d³: %.1f GFLOP/s\n", r.n, r.median_flops / 1e9);
  std::printf("rate (best of the medians): %.1f GFLOP/s\n", best / 1e9);
  return 0;
}

// `--bf16-rate`: the bf16 matmuls (oneDNN) against the float32 ones at GPT
// shapes, where oneDNN runs bf16 natively (kernels::bf16_native: AVX512_BF16
// or AMX-BF16): a figure measured there is a result for every CPU with that
// ISA, and each is labelled with it. Where oneDNN would emulate bf16
// (avx512_core), a rate would be taken for what bf16 gives, so it is not
// measured, and the line says why; --emulated measures it all the same,
// every figure labelled "bf16 emulated: not a result", so that CI runs this
// code on any AVX-512 CPU (ONEDNN_MAX_CPU_ISA=AVX512_CORE).
//
// Two bf16 rates: tapegpt's kernels (oneDNN in shape-fixed pieces, Note
// [bf16 matmuls]) and oneDNN's own, one call on the whole matrices on its
// own threads, as issue 22 measured it. "bf16_rate_gflops", the rate a
// step's model FLOP rate is a share of, is the larger: a slow reference
// would flatter the share.
int print_bf16_rate(bool json, bool emulated) {
  const std::string isa = kernels::dnnl_effective_isa();
  const bool amx = kernels::amx_bf16_usable();
  const bool native = kernels::bf16_native();
  std::string why_not;
  if (isa == "none")
    why_not = "bf16 speed not measured here: this build has no oneDNN (install libdnnl-dev and rebuild)";
  else if (!kernels::bf16_matmul_available())
    why_not = "bf16 speed not measured here: oneDNN has no bf16 matmul below AVX-512 (it runs " + isa + ")";
  else if (!native)
    why_not = "bf16 speed not measured here: oneDNN would emulate bf16 (it runs " + isa +
              ", without AVX512_BF16 or AMX-BF16)";
  const bool measure = native || (emulated && kernels::bf16_matmul_available());
  const char* label = native ? "" : "bf16 emulated: not a result";
  const std::vector<train::Bf16Rate> rates = measure ? train::measure_bf16_rates() : std::vector<train::Bf16Rate>{};
  // Whole-layer rates: three matmuls of equal FLOPs, so FLOPs over summed time.
  auto layer_rate = [](const double (&flops)[3]) { return 3.0 / (1.0 / flops[0] + 1.0 / flops[1] + 1.0 / flops[2]); };
  double pieces_s = 0, whole_s = 0, fp32_s = 0, total = 0;  // all layers: FLOPs over the summed time
  for (const train::Bf16Rate& r : rates) {
    const double f = 2.0 * r.rows * r.IC * r.OC;
    for (int form = 0; form < 3; ++form) {
      pieces_s += f / r.bf16_flops[form];
      whole_s += f / r.bf16_whole_call_flops[form];
      fp32_s += f / r.fp32_flops[form];
      total += f;
    }
  }
  const double pieces = total / pieces_s, whole = total / whole_s, fp32 = total / fp32_s;
  const double reference = std::max(pieces, whole);
  if (json) {
    std::printf("{\"dnnl_version\":\"%s\",\"dnnl_isa\":\"%s\",\"amx_bf16\":%s,\"bf16_native\":%s,\"threads\":%d",
                kernels::dnnl_version().c_str(), isa.c_str(), amx ? "true" : "false", native ? "true" : "false",
                omp_get_max_threads());
    if (!measure) {
      std::printf(",\"bf16_rate_gflops\":null,\"not_measured\":\"%s\"}\n", why_not.c_str());
      return 0;
    }
    if (!native) std::printf(",\"label\":\"%s\",\"not_measured\":\"%s\"", label, why_not.c_str());
    std::printf(",\"bf16_rate_gflops\":%.2f,\"tapegpt_bf16_rate_gflops\":%.2f,\"onednn_whole_call_rate_gflops\":%.2f,"
                "\"fp32_rate_gflops\":%.2f,\"dnnl_kernels\":%s,\"dnnl_whole_call_kernels\":%s,\"layers\":[",
                reference / 1e9, pieces / 1e9, whole / 1e9, fp32 / 1e9,
                json_strings(kernels::bf16_matmul_kernels()).c_str(),
                json_strings(kernels::bf16_whole_call_kernels()).c_str());
    for (size_t i = 0; i < rates.size(); ++i) {
      const train::Bf16Rate& r = rates[i];
      std::printf("%s{\"layer\":\"%s\",\"rows\":%lld,\"IC\":%lld,\"OC\":%lld,\"bf16_gflops\":[%.2f,%.2f,%.2f],"
                  "\"bf16_whole_call_gflops\":[%.2f,%.2f,%.2f],\"fp32_gflops\":[%.2f,%.2f,%.2f]}",
                  i ? "," : "", r.layer.c_str(), static_cast<long long>(r.rows), static_cast<long long>(r.IC),
                  static_cast<long long>(r.OC), r.bf16_flops[0] / 1e9, r.bf16_flops[1] / 1e9, r.bf16_flops[2] / 1e9,
                  r.bf16_whole_call_flops[0] / 1e9, r.bf16_whole_call_flops[1] / 1e9,
                  r.bf16_whole_call_flops[2] / 1e9, r.fp32_flops[0] / 1e9, r.fp32_flops[1] / 1e9,
                  r.fp32_flops[2] / 1e9);
    }
    std::printf("]}\n");
    return 0;
  }
  std::printf("oneDNN %s, effective ISA %s; %d threads\n", kernels::dnnl_version().c_str(), isa.c_str(),
              omp_get_max_threads());
  if (!native) std::printf("%s\n", why_not.c_str());
  if (!measure) return 0;
  if (!native) std::printf("--emulated: measured all the same; every figure below: %s\n", label);
  std::printf("bf16: tapegpt's kernels (oneDNN in pieces) and oneDNN's own whole calls; float32: OpenBLAS %s; "
              "GFLOP/s, median of 5 calls:\n",
              kernels::blas_description().c_str());
  std::printf("  %-16s %-18s %26s %26s %26s %7s\n", "layer", "rows×IC→OC", "tapegpt bf16 fwd/dinp/dweight",
              "oneDNN whole fwd/dinp/dweight", "fp32 fwd/dinp/dweight", "ratio");
  for (const train::Bf16Rate& r : rates) {
    const std::string dims = std::to_string(r.rows) + "×" + std::to_string(r.IC) + "→" + std::to_string(r.OC);
    std::printf("  %-16s %-18s %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %6.2f×\n", r.layer.c_str(),
                dims.c_str(), r.bf16_flops[0] / 1e9, r.bf16_flops[1] / 1e9, r.bf16_flops[2] / 1e9,
                r.bf16_whole_call_flops[0] / 1e9, r.bf16_whole_call_flops[1] / 1e9, r.bf16_whole_call_flops[2] / 1e9,
                r.fp32_flops[0] / 1e9, r.fp32_flops[1] / 1e9, r.fp32_flops[2] / 1e9,
                layer_rate(r.bf16_flops) / layer_rate(r.fp32_flops));
  }
  std::printf("rate (all layers, FLOPs over summed time): tapegpt bf16 %.1f GFLOP/s, oneDNN's whole calls %.1f GFLOP/s, "
              "float32 %.1f GFLOP/s (tapegpt bf16 %.2f× float32)%s%s\n",
              pieces / 1e9, whole / 1e9, fp32 / 1e9, pieces / fp32, "; ",
              native ? ("a result for CPUs where oneDNN runs " + isa).c_str() : label);
  std::printf("kernels: tapegpt's pieces ran %s; the whole calls ran %s\n",
              joined(kernels::bf16_matmul_kernels(), ", ").c_str(),
              joined(kernels::bf16_whole_call_kernels(), ", ").c_str());
  return 0;
}

// A flag's value as the command line wrote it, for the shape's name.
std::string flag_text(const train::FlagValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", *d);
    return text;
  }
  return std::get<std::string>(v);
}

// Of the training flags, those bench takes: the model's (but --block-size,
// bench's own) and the optimizer's, so a shape and its optimizer are
// spelled as for `train`.
bool bench_takes(const train::TrainFlag& f) {
  if (f.name.empty() || f.name == "block-size") return false;
  return f.group == "model" || f.name == "optimizer" || f.name == "grad-accum" || f.name == "muon-momentum";
}

// The shape and optimizer to time: --shape's (or --budget-rung's), then the
// training flags given on the command line over it.
void bench_model(const cxxopts::ParseResult& r, train::BenchOptions* o, std::string* name) {
  train::TrainOptions t = train::default_options();
  if (r.count("budget-rung")) {
    if (r.count("shape")) throw tg::UsageError("--budget-rung names a shape: drop --shape");
    const int64_t rung = get<int64_t>(r, "budget-rung");
    if (rung < 1 || rung > train::ladder_rungs())
      throw tg::UsageError("--budget-rung must be between 1 and " + std::to_string(train::ladder_rungs()) +
                           " (the --budget ladder's rungs, smallest first)");
    t.model.vocab_size = 65;  // Tiny Shakespeare's characters, as S and M
    t = train::budget_rung_options(rung - 1, t);
    *name = "rung" + std::to_string(rung);
  } else {
    *name = get<std::string>(r, "shape");
    t.model = bench_shape(*name, &t.batch_size);
  }
  if (r.count("vocab-size")) t.model.vocab_size = get<int64_t>(r, "vocab-size");
  for (const train::TrainFlag& f : train::train_flags())
    if (bench_takes(f) && f.set && r.count(f.name)) {
      f.set(t, train_flag_value(r, f));
      *name += " --" + f.name + (f.type == train::FlagType::Switch ? "" : " " + flag_text(train_flag_value(r, f)));
    }
  if (t.optimizer == train::OptimizerKind::AdamW && r.count("muon-momentum"))
    throw tg::UsageError("--muon-momentum is a setting of --optimizer muon");
  if (t.optimizer == train::OptimizerKind::Muon && !r.count("budget-rung")) t.schedule.lr = train::kDefaultMuonLr;
  o->model = t.model;
  o->batch_size = t.batch_size;
  o->grad_accum = t.grad_accum;
  o->optimizer = t.optimizer;
  o->muon = t.muon;
  o->muon_lr = t.schedule.lr;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  cxxopts::Options opts("tapegpt bench",
                        "Measure training throughput, memory and where a step's time goes, plus\n"
                        "KV-cache sampling speed, on synthetic tokens.\n"
                        "  tapegpt bench --shape S|M|G|demo [--batch-size B] [--block-size T] [--steps N]\n"
                        "  tapegpt bench --budget-rung N   (the shape, batch and optimizer --budget trains at rung N)\n"
                        "  tapegpt bench --shape S --n-layer 2 --mlp relu2 --optimizer muon  (train's model flags)\n"
                        "  tapegpt bench --sgemm-rate    (OpenBLAS's own rate, square 1024-2048)\n"
                        "  tapegpt bench --bf16-rate     (oneDNN's bf16 matmuls against float32 at GPT shapes; native bf16 only)\n"
                        "  tapegpt bench --shape S --tape  (one step's recorded graph and memory plan)");
  opts.add_options()
      ("shape", "S, M, G (see BENCHMARKS.md) or a preset name", cxxopts::value<std::string>()->default_value("S"))
      ("budget-rung", "time rung N (1 = smallest) of train --budget's ladder of shapes, with its recipe: shape, "
                      "context, batch, Muon (vocab 65, Tiny Shakespeare's characters)", cxxopts::value<int64_t>())
      ("vocab-size", "override the vocabulary size", cxxopts::value<int64_t>())
      ("batch-size", "sequences per step (default: the shape's)", cxxopts::value<int64_t>())
      ("block-size", "override the context length T", cxxopts::value<int64_t>())
      ("steps", "timed steps (the median is reported)", cxxopts::value<int64_t>()->default_value("10"))
      ("warmup", "untimed steps first", cxxopts::value<int64_t>()->default_value("3"))
      ("sample-tokens", "tokens to sample with the KV cache (0 = skip)", cxxopts::value<int64_t>()->default_value("64"))
      ("no-profile", "skip the per-kernel profile")
      ("tape", "print the recorded graph of one training step (ops, shapes, where each buffer lives, the backward order with its recomputations) and exit")
      ("naive-attention", "also time one layer's naive T×T attention kernels against the blockwise ones")
      ("sgemm-rate", "only measure OpenBLAS's sgemm rate: square 1024, 1536, 2048, median of 7 calls each")
      ("bf16-rate", "only measure the bf16 matmuls (oneDNN) against float32 at GPT shapes, and say which instruction "
                    "set oneDNN runs; where it would emulate bf16 (no AVX512_BF16 or AMX-BF16) says so and measures "
                    "nothing (unless --emulated)")
      ("emulated", "with --bf16-rate: measure even where bf16 is emulated, every figure labelled \"bf16 emulated: "
                   "not a result\" (checks the code, measures nothing worth keeping)")
      ("json", "one JSON object instead of text")
      ("precision", "fp32 | bf16 | auto: the step's matmuls in float32, or with bf16 operands and float32 sums; "
                    "auto picks bf16 where oneDNN runs it natively and measures it faster (Note [auto precision])",
       cxxopts::value<std::string>()->default_value("auto"));
  add_common_options(opts);
  {
    cxxopts::OptionAdder add = opts.add_options("model and optimizer (as train's; over --shape's or --budget-rung's)");
    for (const train::TrainFlag& f : train::train_flags())
      if (bench_takes(f)) add_train_flag(add, f, /*with_default=*/false);
  }
  cxxopts::ParseResult r;
  if (!parse_or_help(opts, argc, argv, &r)) return 0;
  // The training flags describe a step to time: not with the rate-only modes.
  std::vector<std::string> shape_flags = {"shape", "batch-size", "block-size", "steps", "warmup", "sample-tokens",
                                          "no-profile", "naive-attention", "tape", "precision", "budget-rung",
                                          "vocab-size"};
  for (const train::TrainFlag& f : train::train_flags())
    if (bench_takes(f)) shape_flags.push_back(f.name);
  if (r.count("bf16-rate")) {
    for (const std::string& flag : shape_flags)
      if (r.count(flag)) throw tg::UsageError("--bf16-rate measures only the bf16 and float32 matmuls; drop --" + flag);
    if (r.count("sgemm-rate")) throw tg::UsageError("--bf16-rate measures only the bf16 and float32 matmuls; drop --sgemm-rate");
    return print_bf16_rate(r.count("json") > 0, r.count("emulated") > 0);
  }
  if (r.count("emulated")) throw tg::UsageError("--emulated goes with --bf16-rate only");
  if (r.count("sgemm-rate")) {
    for (const std::string& flag : shape_flags)
      if (r.count(flag)) throw tg::UsageError("--sgemm-rate measures only OpenBLAS's sgemm; drop --" + flag);
    return print_sgemm_rate(r.count("json") > 0);
  }
  train::BenchOptions o;
  std::string shape_name;
  bench_model(r, &o, &shape_name);
  if (r.count("batch-size")) o.batch_size = get<int64_t>(r, "batch-size");
  if (r.count("block-size")) o.model.block_size = get<int64_t>(r, "block-size");
  const train::AutoShape shape{o.batch_size * o.model.block_size, o.model.n_embd};
  const train::PrecisionChoice precision = train::choose_precision(get<std::string>(r, "precision"), "asked for",
                                                                   &shape);
  o.precision = precision.precision;
  if (r.count("tape")) {
    const std::string err = nn::config_error(o.model);
    if (!err.empty()) throw tg::UsageError(err);
    if (o.batch_size < 1) throw tg::UsageError("--batch-size must be at least 1");
    nn::GPT model = nn::gpt_create(o.model, nn::parameter_store_create(o.model));
    nn::set_precision(model.store, o.precision);
    autograd::Tape tape;
    nn::gpt_record_step(tape, model, o.batch_size, o.model.block_size);
    std::fputs(autograd::tape_dump(tape, autograd::plan_memory(tape)).c_str(), stdout);
    return 0;
  }
  o.steps = get<int64_t>(r, "steps");
  o.warmup = get<int64_t>(r, "warmup");
  o.sample_tokens = get<int64_t>(r, "sample-tokens");
  o.profile = !r.count("no-profile");
  o.naive_attention = r.count("naive-attention") > 0;
  if (o.steps < 1 || o.warmup < 0 || o.batch_size < 1 || o.grad_accum < 1 || o.sample_tokens < 0)
    throw tg::UsageError("--steps, --batch-size and --grad-accum must be at least 1, --warmup and --sample-tokens "
                         "at least 0");
  const std::string err = nn::config_error(o.model);
  if (!err.empty()) throw tg::UsageError(err);
  // The sampling model holds prompt + new tokens: the same limit on its context.
  const int64_t max_sample = 65536 - o.prompt_tokens;
  if (o.sample_tokens > max_sample)
    throw tg::UsageError("--sample-tokens must be at most " + std::to_string(max_sample) +
                         " (with the " + std::to_string(o.prompt_tokens) +
                         "-token prompt the sampling context may not exceed 65536 tokens)");

  const train::BenchResult b = train::run_bench(o);
  const double flops_tok = nn::training_flops_per_token(o.model);
  if (r.count("json")) {
    std::printf("{\"shape\":\"%s\",\"batch\":%lld,\"T\":%lld,\"threads\":%d,\"step_s\":%.6f,\"tokens_per_s\":%.1f,"
                "\"flops_per_token\":%.0f,\"matmul_flops_per_token\":%.0f,\"model_gflops\":%.2f,\"sgemm_peak_gflops\":%.2f,\"optimizer_s\":%.6f,"
                "\"peak_rss_mib\":%.1f,\"sample_tokens_per_s\":%s,\"blas_core\":\"%s\","
                "\"blas_build\":\"%s\",\"blas_split\":%s,\"precision\":\"%s\",\"precision_reason\":\"%s\","
                "\"precision_speedup\":%s,\"dnnl_isa\":\"%s\",\"dnnl_kernels\":%s,\"optimizer\":\"%s\",\"grad_accum\":%lld,"
                "\"n_layer\":%lld,\"n_embd\":%lld,\"vocab\":%lld",
                shape_name.c_str(), static_cast<long long>(o.batch_size),
                static_cast<long long>(o.model.block_size), omp_get_max_threads(), b.step_seconds, b.tokens_per_s,
                flops_tok, 6.0 * static_cast<double>(nn::matmul_parameters(o.model)), b.model_flops_per_s / 1e9, b.sgemm_peak_flops / 1e9, b.optimizer_seconds,
                mib(static_cast<double>(b.peak_rss_bytes)),
                json_number_or_null(o.sample_tokens > 0, b.sample_tokens_per_s).c_str(), kernels::blas_core_name(),
                kernels::blas_build_name(),
                kernels::blas_split_in_kernels() ? "true" : "false", train::precision_name(o.precision),
                precision.reason.c_str(),
                json_number_or_null(precision.measured_speedup > 0, precision.measured_speedup).c_str(),
                kernels::dnnl_effective_isa().c_str(),
                json_strings(kernels::bf16_matmul_kernels()).c_str(),
                o.optimizer == train::OptimizerKind::Muon ? "muon" : "adamw", static_cast<long long>(o.grad_accum),
                static_cast<long long>(o.model.n_layer), static_cast<long long>(o.model.n_embd),
                static_cast<long long>(o.model.vocab_size));
    // Seconds per step by kernel category, for scripts to compare (the
    // optimizer entry is the real step's; the rest are replayed kernels).
    if (!b.profile.empty()) {
      std::printf(",\"profile_s\":{");
      for (size_t i = 0; i < b.profile.size(); ++i)
        std::printf("%s\"%s\":%.6f", i ? "," : "", profile_key(b.profile[i].category).c_str(), b.profile[i].seconds);
      std::printf("}");
    }
    if (o.naive_attention)
      std::printf(",\"attention_blockwise_s\":%.6f,\"attention_naive_s\":%.6f,\"attention_blockwise_saved_mib\":%.3f,"
                  "\"attention_naive_saved_mib\":%.1f,\"attention_naive_scratch_mib\":%.1f",
                  b.attention.blockwise_seconds, b.attention.naive_seconds,
                  mib(static_cast<double>(b.attention.blockwise_saved_bytes)),
                  mib(static_cast<double>(b.attention.naive_saved_bytes)),
                  mib(static_cast<double>(b.attention.naive_scratch_bytes)));
    std::printf("}\n");
    return 0;
  }
  std::printf("shape %s: vocab %lld, %lld layers, %lld heads, n_embd %lld, T %lld, B %lld (OpenBLAS %s)\n",
              shape_name.c_str(), static_cast<long long>(o.model.vocab_size),
              static_cast<long long>(o.model.n_layer), static_cast<long long>(o.model.n_head),
              static_cast<long long>(o.model.n_embd), static_cast<long long>(o.model.block_size),
              static_cast<long long>(o.batch_size), kernels::blas_description().c_str());
  std::printf("precision: %s (%s)\n", train::precision_name(o.precision), precision.reason.c_str());
  std::printf("training step: median %.4f s over %lld steps = %.0f tokens/s, %.1f GFLOP/s of model FLOPs "
              "(%.1f MFLOP/token) = %.0f%% of the measured sgemm peak %.1f GFLOP/s\n",
              b.step_seconds, static_cast<long long>(o.steps), b.tokens_per_s, b.model_flops_per_s / 1e9,
              flops_tok / 1e6, 100.0 * b.model_flops_per_s / b.sgemm_peak_flops, b.sgemm_peak_flops / 1e9);
  if (!kernels::bf16_matmul_kernels().empty())
    std::printf("bf16 matmuls ran oneDNN's %s\n", joined(kernels::bf16_matmul_kernels(), ", ").c_str());
  std::printf("optimizer (clip + %s + zeroing): %.4f s = %.1f%% of a step\n",
              o.optimizer == train::OptimizerKind::Muon ? "Muon/AdamW" : "AdamW", b.optimizer_seconds,
              100.0 * b.optimizer_seconds / b.step_seconds);
  std::printf("memory: peak RSS %.1f MiB; parameters %.1f, gradients %.1f, AdamW moments %.1f, activations %.1f MiB\n",
              mib(static_cast<double>(b.peak_rss_bytes)), mib(static_cast<double>(b.parameter_bytes)),
              mib(static_cast<double>(b.gradient_bytes)), mib(static_cast<double>(b.moment_bytes)),
              mib(static_cast<double>(b.activation_bytes)));
  if (!b.profile.empty()) {
    double total = 0;
    for (const train::ProfileEntry& p : b.profile) total += p.seconds;
    std::printf("profile (kernels replayed with this step's shapes; sum %.4f s vs step %.4f s):\n", total, b.step_seconds);
    for (const train::ProfileEntry& p : b.profile)
      std::printf("  %-38s %8.4f s  %5.1f%%\n", p.category.c_str(), p.seconds, 100.0 * p.seconds / total);
  }
  if (o.naive_attention)
    std::printf("attention kernels alone, one layer forward + backward: blockwise %.4f s, naive %.4f s (%.2f× the blockwise time); "
                "kept for backward: blockwise %.3f MiB, naive %.1f MiB plus %.1f MiB backward scratch\n",
                b.attention.blockwise_seconds, b.attention.naive_seconds,
                b.attention.naive_seconds / b.attention.blockwise_seconds,
                mib(static_cast<double>(b.attention.blockwise_saved_bytes)),
                mib(static_cast<double>(b.attention.naive_saved_bytes)),
                mib(static_cast<double>(b.attention.naive_scratch_bytes)));
  if (b.sample_tokens_per_s > 0) {
    const double bound = b.memory_bandwidth / b.weight_bytes;
    std::printf("sampling (KV cache, batch 1, %lld-token prompt): %.1f tokens/s; reading the %.1f MiB of weights once "
                "per token at the measured %.1f GB/s would allow %.1f tokens/s (%.0f%% of that bound)\n",
                static_cast<long long>(o.prompt_tokens), b.sample_tokens_per_s, mib(b.weight_bytes),
                b.memory_bandwidth / 1e9, bound, 100.0 * b.sample_tokens_per_s / bound);
  }
  return 0;
}

}  // namespace cli
