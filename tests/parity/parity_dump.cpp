// tapegpt_parity_dump: runs one tiny GPT through K training steps (the
// trainer's own, train/train_step.h) on one fixed batch and writes every
// intermediate the PyTorch parity check (scripts/torch_parity.py) compares: weights, batch, logits, loss, gradients
// and the weights after each step, as raw float32/int32 files + manifest.json.
//
// Usage:
//   tapegpt_parity_dump --out DIR [--vocab V] [--block T'] [--layers L]
//       [--heads NH] [--embd C] [--bias 0|1] [--tied 0|1]
//       [--pos learned|sinusoidal|rope] [--gelu tanh|erf] [--norm layernorm|rmsnorm]
//       [--mlp gelu|relu2|swiglu] [--seed S] [--batch B] [--time T]
//       [--steps K] [--lr LR] [--clip G] [--wd WD] [--spread F]
//
// Layout of DIR (all little-endian, parameters concatenated in the order and
// at the element offsets listed in manifest.json's "params"):
//   inputs.bin, targets.bin   int32 [B,T]
//   logits.bin                float32 [B,T,V] at weights_0
//   weights_0.bin             initial parameters
//   grads_K.bin  (K=0..)      gradients of the loss at weights_K
//   weights_K.bin (K=1..)     parameters after optimizer step K
// and manifest.json with the config, the optimizer settings, the loss and the
// gradient norm measured at each step.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/arena.h"
#include "autograd/ops.h"
#include "autograd/base/rng.h"
#include "autograd/tape.h"
#include "nn/config.h"
#include "nn/gpt.h"
#include "train/train_step.h"

namespace {

struct Options {
  nn::GPTConfig config;
  std::string out;
  uint64_t seed = 1337;
  int64_t B = 2, T = 0;  // T = 0: the full block_size
  int64_t steps = 3;
  float lr = 1e-3f;
  float spread = 5.0f;
  train::AdamWConfig adamw;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "tapegpt_parity_dump: %s\n", message.c_str());
  std::exit(2);
}

// --pos (the flag's old spelling), --pos-encoding, --gelu, --norm, --mlp:
// the model choices (Note [Model choices] in nn/config.h); null otherwise.
const nn::ModelChoice* choice_flag(const std::string& flag) {
  if (flag == "--pos") return &nn::model_choice("pos_encoding");
  for (const nn::ModelChoice& row : nn::model_choices())
    if (flag == "--" + std::string(row.flag)) return &row;
  return nullptr;
}

int64_t parse_int(const std::string& flag, const char* text) {
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0') usage_error(flag + " wants an integer, got '" + text + "'");
  return v;
}

float parse_float(const std::string& flag, const char* text) {
  char* end = nullptr;
  const float v = std::strtof(text, &end);
  if (end == text || *end != '\0') usage_error(flag + " wants a number, got '" + text + "'");
  return v;
}

Options parse_options(int argc, char** argv) {
  Options o;
  // Small defaults so a run takes milliseconds; the script passes its own.
  o.config.vocab_size = 23;
  o.config.block_size = 8;
  o.config.n_layer = 2;
  o.config.n_head = 2;
  o.config.n_embd = 16;
  o.adamw.grad_clip = 0.5f;
  o.adamw.weight_decay = 0.1f;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage_error(flag + " needs a value (see the usage at the top of parity_dump.cpp)");
    const char* v = argv[++i];
    if (flag == "--out") o.out = v;
    else if (flag == "--vocab") o.config.vocab_size = parse_int(flag, v);
    else if (flag == "--block") o.config.block_size = parse_int(flag, v);
    else if (flag == "--layers") o.config.n_layer = parse_int(flag, v);
    else if (flag == "--heads") o.config.n_head = parse_int(flag, v);
    else if (flag == "--embd") o.config.n_embd = parse_int(flag, v);
    else if (flag == "--bias") o.config.bias = parse_int(flag, v) != 0;
    else if (flag == "--tied") o.config.tied = parse_int(flag, v) != 0;
    else if (const nn::ModelChoice* row = choice_flag(flag)) {
      if (!nn::choice_parse(*row, v, &o.config))
        usage_error(flag + " wants " + nn::choice_list(*row) + ", got '" + std::string(v) + "'");
    }
    else if (flag == "--seed") o.seed = static_cast<uint64_t>(parse_int(flag, v));
    else if (flag == "--batch") o.B = parse_int(flag, v);
    else if (flag == "--time") o.T = parse_int(flag, v);
    else if (flag == "--steps") o.steps = parse_int(flag, v);
    else if (flag == "--lr") o.lr = parse_float(flag, v);
    else if (flag == "--clip") o.adamw.grad_clip = parse_float(flag, v);
    else if (flag == "--wd") o.adamw.weight_decay = parse_float(flag, v);
    else if (flag == "--spread") o.spread = parse_float(flag, v);
    else usage_error("unknown flag " + flag + " (see the usage at the top of parity_dump.cpp)");
  }
  if (o.out.empty()) usage_error("--out DIR is required (an existing directory for the dump)");
  const std::string bad = nn::config_error(o.config);
  if (!bad.empty()) usage_error(bad);
  if (o.T == 0) o.T = o.config.block_size;
  if (o.B < 1) usage_error("--batch must be at least 1");
  if (o.T < 1 || o.T > o.config.block_size) usage_error("--time must be in 1..--block");
  if (o.steps < 0) usage_error("--steps must be at least 0");
  return o;
}

// Raw dumps are little-endian by contract; numpy reads them as '<f4'/'<i4'.
bool host_is_little_endian() {
  const uint32_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

void write_raw(const std::string& dir, const std::string& file, const void* data, size_t bytes) {
  const std::string path = dir + "/" + file;
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!f) usage_error("cannot write " + path + " (does --out name a writable directory?)");
}

// All parameters concatenated in table order, without the store's alignment
// padding, so the file's element offsets are the ones in the manifest.
void write_params(const std::string& dir, const std::string& file, const nn::ParameterStore& s,
                  const float* buffer) {
  std::vector<float> flat;
  for (const nn::ParamInfo& p : s.table) flat.insert(flat.end(), buffer + p.offset, buffer + p.offset + p.numel);
  write_raw(dir, file, flat.data(), flat.size() * sizeof(float));
}

// GPT-2's init (std 0.02) gives gradients so small and a softmax so flat that
// a float32 error in most terms would hide below the comparison threshold, so
// weights are spread by `spread` and every bias and LayerNorm parameter gets
// noise: then every term of every gradient carries a visible share.
void spread_weights(nn::GPT& m, float spread, uint64_t seed) {
  for (const nn::ParamInfo& p : m.store.table) {
    float* d = m.store.values.floats() + p.offset;
    tg::Rng rng(seed ^ (0x9e3779b97f4a7c15ull * static_cast<uint64_t>(p.offset + 1)));
    const bool norm = p.name.find("ln_") != std::string::npos;
    for (int64_t i = 0; i < p.numel; ++i) {
      const float noise = static_cast<float>(rng.normal());
      if (norm && p.shape.size() == 1 && p.name.find(".weight") != std::string::npos)
        d[i] = 1.0f + 0.2f * noise;  // LayerNorm gains stay near 1
      else
        d[i] = d[i] * spread + 0.05f * noise;
    }
  }
}

// The one batch every step trains on.
class FixedBatch : public train::BatchSource {
 public:
  FixedBatch(const std::vector<int32_t>& inputs, const std::vector<int32_t>& targets)
      : inputs_(inputs), targets_(targets) {}
  void fill(int32_t* inputs, int32_t* targets, tg::Rng&) override {
    std::copy(inputs_.begin(), inputs_.end(), inputs);
    std::copy(targets_.begin(), targets_.end(), targets);
  }

 private:
  const std::vector<int32_t>& inputs_;
  const std::vector<int32_t>& targets_;
};

// Writes grads_K.bin from the all-reduce seam (Note [Gradient all-reduce
// seam]): there the step's gradient is complete and not yet clipped.
class DumpGradients : public train::GradientReducer {
 public:
  explicit DumpGradients(const std::string& dir) : dir_(dir) {}
  void reduce(nn::ParameterStore& store) override {
    write_params(dir_, "grads_" + std::to_string(k_++) + ".bin", store, store.grads.data());
  }

 private:
  std::string dir_;
  int64_t k_ = 0;
};

std::string json_float(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);  // 9 digits round-trip a float32
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  if (!host_is_little_endian()) usage_error("the dump format is little-endian; this host is not");
  const Options o = parse_options(argc, argv);
  const nn::GPTConfig& c = o.config;

  nn::GPT model = nn::gpt_create(c);
  nn::gpt_init(model, o.seed);
  spread_weights(model, o.spread, o.seed);

  tg::Rng rng(o.seed + 1);
  std::vector<int32_t> inputs, targets;
  for (int64_t i = 0; i < o.B * o.T; ++i) {
    inputs.push_back(static_cast<int32_t>(rng.below(static_cast<uint64_t>(c.vocab_size))));
    targets.push_back(static_cast<int32_t>(rng.below(static_cast<uint64_t>(c.vocab_size))));
  }
  write_raw(o.out, "inputs.bin", inputs.data(), inputs.size() * sizeof(int32_t));
  write_raw(o.out, "targets.bin", targets.data(), targets.size() * sizeof(int32_t));
  write_params(o.out, "weights_0.bin", model.store, model.store.values.floats());

  // The logits at weights_0, from the untaped forward (the same kernels;
  // the step's own cross_entropy overwrites its logits with probabilities).
  std::vector<float> logits;
  {
    autograd::Arena arena;
    autograd::OpContext ctx{&arena, nullptr};
    const autograd::Tensor l = nn::gpt_forward(ctx, model, inputs.data(), o.B, o.T);
    logits.assign(l.data, l.data + l.numel());
  }

  // Step k+1 is the trainer's step (train/train_step.cpp) at weights_k: its
  // loss k, grads_k (dumped at the all-reduce seam) and norm k, then clip +
  // AdamW -> weights_{k+1}. A last step gives the loss and gradient after
  // the final update (its own update is not dumped).
  FixedBatch batch(inputs, targets);
  DumpGradients dump(o.out);
  train::TrainStep step(model, train::StepShape{o.B, o.T, 1});
  step.set_gradient_reducer(&dump);
  std::vector<double> losses, norms;
  for (int64_t k = 0; k <= o.steps; ++k) {
    const train::StepResult r = step.run(batch, rng, o.adamw, o.lr, k + 1);
    losses.push_back(r.loss);
    norms.push_back(r.grad_norm);
    if (k < o.steps)
      write_params(o.out, "weights_" + std::to_string(k + 1) + ".bin", model.store, model.store.values.floats());
  }
  write_raw(o.out, "logits.bin", logits.data(), logits.size() * sizeof(float));

  std::ostringstream js;
  js << "{\n  \"config\": {\"vocab_size\": " << c.vocab_size << ", \"block_size\": " << c.block_size
     << ", \"n_layer\": " << c.n_layer << ", \"n_head\": " << c.n_head << ", \"n_embd\": " << c.n_embd
     << ", \"bias\": " << (c.bias ? "true" : "false") << ", \"tied\": " << (c.tied ? "true" : "false")
     << ", \"dropout\": " << json_float(c.dropout);
  for (const nn::ModelChoice& row : nn::model_choices())  // pos_encoding, gelu, norm, mlp
    js << ", \"" << row.key << "\": \"" << nn::choice_name(row, c) << "\"";
  js << "},\n";
  js << "  \"seed\": " << o.seed << ", \"B\": " << o.B << ", \"T\": " << o.T
     << ", \"spread\": " << json_float(o.spread) << ",\n";
  js << "  \"optimizer\": {\"steps\": " << o.steps << ", \"lr\": " << json_float(o.lr)
     << ", \"beta1\": " << json_float(o.adamw.beta1) << ", \"beta2\": " << json_float(o.adamw.beta2)
     << ", \"eps\": " << json_float(o.adamw.eps) << ", \"weight_decay\": "
     << json_float(o.adamw.weight_decay) << ", \"grad_clip\": " << json_float(o.adamw.grad_clip)
     << "},\n";
  js << "  \"losses\": [";
  for (size_t k = 0; k < losses.size(); ++k) js << (k ? ", " : "") << json_float(losses[k]);
  js << "],\n  \"grad_norms\": [";
  for (size_t k = 0; k < norms.size(); ++k) js << (k ? ", " : "") << json_float(norms[k]);
  js << "],\n  \"params\": [\n";
  int64_t offset = 0;
  for (size_t i = 0; i < model.store.table.size(); ++i) {
    const nn::ParamInfo& p = model.store.table[i];
    js << "    {\"name\": \"" << p.name << "\", \"shape\": [";
    for (size_t d = 0; d < p.shape.size(); ++d) js << (d ? ", " : "") << p.shape[d];
    js << "], \"offset\": " << offset << ", \"numel\": " << p.numel << "}"
       << (i + 1 < model.store.table.size() ? ",\n" : "\n");
    offset += p.numel;
  }
  js << "  ]\n}\n";
  const std::string manifest = js.str();
  write_raw(o.out, "manifest.json", manifest.data(), manifest.size());
  return 0;
}
