// The export pieces on their own: float16 rounding against a table of every
// half, the GGUF container read back by a small independent reader, the
// RoPE reordering of q and k checked as what it must preserve (every q·k at
// every pair of positions), the family refusals, and the byte-level
// vocabularies. The end-to-end check against llama.cpp is test_export.py.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "autograd/kernels/kernels.h"
#include "checkpoints/export/byte_level_vocab.h"
#include "checkpoints/export/export_family.h"
#include "checkpoints/export/gguf_export.h"
#include "checkpoints/export/gguf_write.h"
#include "checkpoints/export/hf_export.h"
#include "data/bpe_train.h"
#include "data/gpt2_vocab.h"
#include "data/tokenizer.h"
#include "nn/gpt.h"
#include "support/files.h"

namespace {

// A GGUF reader written from the spec (ggml docs/gguf.md), independent of
// the writer: key-values as strings, tensors as (dims, type, bytes).
struct Gguf {
  uint32_t version = 0;
  std::map<std::string, std::string> kv;  // scalars printed; arrays as "[n]" + their first item
  std::map<std::string, std::vector<std::string>> strings;
  struct Tensor {
    std::vector<uint64_t> dims;
    uint32_t type = 0;
    uint64_t offset = 0;
    const unsigned char* data = nullptr;
  };
  std::map<std::string, Tensor> tensors;
  std::string bytes;
};

Gguf read_gguf(const std::string& path) {
  Gguf g;
  g.bytes = testing::read_bytes(path);
  size_t at = 0;
  auto take = [&](size_t n) {
    REQUIRE(at + n <= g.bytes.size());
    const char* p = g.bytes.data() + at;
    at += n;
    return p;
  };
  auto u32 = [&] { uint32_t v; std::memcpy(&v, take(4), 4); return v; };
  auto u64 = [&] { uint64_t v; std::memcpy(&v, take(8), 8); return v; };
  auto str = [&] { const uint64_t n = u64(); return std::string(take(n), n); };
  REQUIRE(std::string(take(4), 4) == "GGUF");
  g.version = u32();
  const uint64_t n_tensors = u64(), n_kv = u64();
  for (uint64_t i = 0; i < n_kv; ++i) {
    const std::string key = str();
    const uint32_t type = u32();
    if (type == 4) g.kv[key] = std::to_string(u32());
    else if (type == 6) { float f; std::memcpy(&f, take(4), 4); g.kv[key] = std::to_string(f); }
    else if (type == 7) g.kv[key] = *take(1) ? "true" : "false";
    else if (type == 8) g.kv[key] = str();
    else {
      REQUIRE(type == 9);
      const uint32_t elem = u32();
      const uint64_t n = u64();
      g.kv[key] = "[" + std::to_string(n) + "]";
      for (uint64_t j = 0; j < n; ++j) {
        if (elem == 8) g.strings[key].push_back(str());
        else { REQUIRE(elem == 5); g.strings[key].push_back(std::to_string(static_cast<int32_t>(u32()))); }
      }
    }
  }
  std::vector<std::string> order;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    const std::string name = str();
    Gguf::Tensor t;
    const uint32_t rank = u32();
    for (uint32_t d = 0; d < rank; ++d) t.dims.push_back(u64());
    t.type = u32();
    t.offset = u64();
    g.tensors[name] = t;
    order.push_back(name);
  }
  const size_t data_start = (at + 31) / 32 * 32;
  for (auto& [name, t] : g.tensors) {
    CHECK(t.offset % 32 == 0);
    uint64_t n = 1;
    for (uint64_t d : t.dims) n *= d;
    REQUIRE(data_start + t.offset + n * (t.type == 1 ? 2 : 4) <= g.bytes.size());
    t.data = reinterpret_cast<const unsigned char*>(g.bytes.data()) + data_start + t.offset;
  }
  return g;
}

std::vector<float> f32_of(const Gguf::Tensor& t) {
  REQUIRE(t.type == 0);
  uint64_t n = 1;
  for (uint64_t d : t.dims) n *= d;
  std::vector<float> out(n);
  std::memcpy(out.data(), t.data, n * 4);
  return out;
}

// A small model with random weights (gpt_init), parameters by name.
nn::GPT random_model(const nn::GPTConfig& c) {
  nn::GPT m = nn::gpt_create(c);
  nn::gpt_init(m, 7);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  for (int64_t i = 0; i < m.store.total; ++i) m.store.values.floats()[i] += normal(rng);  // biases and gains too
  return m;
}

}  // namespace

// The half nearest to x, from the table of every finite half's value (an
// oracle independent of bit tricks and of compiler _Float16 support): ties
// go to the even bit pattern; |x| >= 65520 is infinity.
uint16_t nearest_half(float x) {
  static const std::vector<double> values = [] {
    std::vector<double> v;  // bit patterns 0x0000..0x7BFF, increasing values
    for (uint32_t h = 0; h < 0x7C00; ++h) {
      const uint32_t e = h >> 10, m = h & 0x3FF;
      v.push_back(e == 0 ? std::ldexp(static_cast<double>(m), -24) : std::ldexp(1024.0 + m, static_cast<int>(e) - 25));
    }
    return v;
  }();
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(x));
  if (a >= 65520.0) return sign | 0x7C00;
  const size_t hi = static_cast<size_t>(std::lower_bound(values.begin(), values.end(), a) - values.begin());
  if (hi == 0) return sign;
  if (hi == values.size()) return sign | 0x7BFF;
  const double up = values[hi] - a, down = a - values[hi - 1];
  const size_t pick = up < down ? hi : down < up ? hi - 1 : (hi % 2 == 0 ? hi : hi - 1);
  return sign | static_cast<uint16_t>(pick);
}

TEST_CASE("f16_from_f32 rounds to the nearest half, ties to even, overflow flagged") {
  std::mt19937 rng(1);
  std::vector<float> xs = {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 65519.99f, 65520.0f, -1e6f, 6.1035156e-05f,
                           5.9604645e-08f, 2.9802322e-08f, 2.9802326e-08f, 1e-10f, 0.333333343f, 1.00048828125f,
                           1.0009765625f, 1.00146484375f};
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = static_cast<uint32_t>(rng());
    // Mostly the range float16 can hold (exponents 2^-26 .. 2^16).
    bits = (bits & 0x807FFFFFu) | ((101u + (bits >> 23) % 42u) << 23);
    float x;
    std::memcpy(&x, &bits, 4);
    xs.push_back(x);
  }
  for (float x : xs) {
    bool overflow = false;
    const uint16_t ours = checkpoints::f16_from_f32(x, &overflow);
    const uint16_t want = nearest_half(x);
    INFO("x = " << x);
    REQUIRE(ours == want);
    REQUIRE(overflow == ((want & 0x7FFF) == 0x7C00));
  }
}

TEST_CASE("GgufWriter writes GGUF v3: key-values, reversed dims, aligned data, f16 halves") {
  testing::TempDir dir;
  checkpoints::GgufWriter w;
  w.add_string("general.architecture", "gpt2");
  w.add_u32("gpt2.block_count", 3);
  w.add_f32("gpt2.attention.layer_norm_epsilon", 1e-5f);
  w.add_bool("tokenizer.ggml.add_bos_token", false);
  w.add_strings("tokenizer.ggml.tokens", {"a", "Ġb", ""});
  w.add_i32s("tokenizer.ggml.token_type", {1, 3, -5});
  const std::vector<float> m = {1, 2, 3, 4, 5, 6}, v = {0.5f, -1.0f, 3.0f};
  w.add_tensor("w", {2, 3}, m.data(), checkpoints::GgufDtype::F32);
  w.add_tensor("v", {3}, v.data(), checkpoints::GgufDtype::F32);
  w.add_tensor("h", {3, 1}, v.data(), checkpoints::GgufDtype::F16);
  w.write(dir.file("x.gguf"));
  CHECK(dir.listing() == "x.gguf");  // no temporary left

  const Gguf g = read_gguf(dir.file("x.gguf"));
  CHECK(g.version == 3);
  CHECK(g.kv.at("general.architecture") == "gpt2");
  CHECK(g.kv.at("gpt2.block_count") == "3");
  CHECK(g.kv.at("gpt2.attention.layer_norm_epsilon") == std::to_string(1e-5f));
  CHECK(g.kv.at("tokenizer.ggml.add_bos_token") == "false");
  CHECK(g.strings.at("tokenizer.ggml.tokens") == std::vector<std::string>{"a", "Ġb", ""});
  CHECK(g.strings.at("tokenizer.ggml.token_type") == std::vector<std::string>{"1", "3", "-5"});
  const Gguf::Tensor& tw = g.tensors.at("w");
  CHECK(tw.dims == std::vector<uint64_t>{3, 2});  // innermost first
  CHECK(f32_of(tw) == m);
  CHECK(f32_of(g.tensors.at("v")) == v);
  const Gguf::Tensor& th = g.tensors.at("h");
  CHECK((th.type == 1 && th.dims == std::vector<uint64_t>{1, 3}));
  uint16_t halves[3];
  std::memcpy(halves, th.data, 6);
  CHECK((halves[0] == 0x3800 && halves[1] == 0xBC00 && halves[2] == 0x4200));

  // A value float16 cannot hold: refused, and no file written.
  checkpoints::GgufWriter big;
  const float huge = 1e6f;
  big.add_tensor("blk.0.ffn_up.weight", {1, 1}, &huge, checkpoints::GgufDtype::F16);
  CHECK_THROWS_WITH(big.write(dir.file("big.gguf")), Catch::Contains("blk.0.ffn_up.weight") &&
                                                         Catch::Contains("--dtype f32"));
  CHECK(dir.listing() == "x.gguf");
}

TEST_CASE("llama export: q and k reordered so llama.cpp's adjacent-pair RoPE gives our q·k") {
  nn::GPTConfig c;
  c.vocab_size = 256, c.block_size = 8, c.n_layer = 1, c.n_head = 2, c.n_embd = 16;
  c.norm = nn::NormKind::RMSNorm, c.mlp = nn::MlpKind::Swiglu, c.pos_encoding = nn::PosEncoding::Rope;
  const nn::GPT m = random_model(c);
  testing::TempDir dir;
  const data::TokenizerSpec tok = data::byte_spec();
  checkpoints::gguf_export(dir.file("l.gguf"), {m.config, m.store, nullptr, tok, "l"}, checkpoints::GgufDtype::F32);
  const Gguf g = read_gguf(dir.file("l.gguf"));
  CHECK(g.kv.at("general.architecture") == "llama");
  CHECK(g.kv.at("llama.rope.dimension_count") == "8");
  const int64_t C = c.n_embd, HS = c.head_size();
  const std::vector<float> wq = f32_of(g.tensors.at("blk.0.attn_q.weight"));
  const std::vector<float> wk = f32_of(g.tensors.at("blk.0.attn_k.weight"));
  const std::vector<float> bq = f32_of(g.tensors.at("blk.0.attn_q.bias"));
  const std::vector<float> bk = f32_of(g.tensors.at("blk.0.attn_k.bias"));
  const float* w = checkpoints::export_param(m.store, "transformer.h.0.attn.c_attn.weight");
  const float* b = checkpoints::export_param(m.store, "transformer.h.0.attn.c_attn.bias");

  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<float> x(C), y(C);
  for (float& v : x) v = normal(rng);
  for (float& v : y) v = normal(rng);
  // Ours: qkv rows of x at position px and of y at py, rotated by our kernel.
  auto ours = [&](const std::vector<float>& in, int64_t pos) {
    std::vector<float> qkv(3 * C);
    for (int64_t r = 0; r < 3 * C; ++r) {
      qkv[r] = b[r];
      for (int64_t i = 0; i < C; ++i) qkv[r] += w[r * C + i] * in[i];
    }
    kernels::rope_forward(qkv.data(), qkv.data(), 1, 1, C, c.n_head, pos);
    return qkv;
  };
  // llama.cpp's: the exported rows, then adjacent pairs (2i, 2i+1) rotated
  // by pos·10000^(-2i/HS) (ggml's rope, mode 0).
  auto theirs = [&](const std::vector<float>& wt, const std::vector<float>& bias, const std::vector<float>& in,
                    int64_t pos) {
    std::vector<float> out(C);
    for (int64_t r = 0; r < C; ++r) {
      out[r] = bias[r];
      for (int64_t i = 0; i < C; ++i) out[r] += wt[r * C + i] * in[i];
    }
    for (int64_t h = 0; h < c.n_head; ++h)
      for (int64_t i = 0; i < HS / 2; ++i) {
        const double a = static_cast<double>(pos) * std::pow(10000.0, -2.0 * i / HS);
        float& u = out[h * HS + 2 * i];
        float& v = out[h * HS + 2 * i + 1];
        const float u0 = u, v0 = v;
        u = static_cast<float>(u0 * std::cos(a) - v0 * std::sin(a));
        v = static_cast<float>(u0 * std::sin(a) + v0 * std::cos(a));
      }
    return out;
  };
  for (int64_t px = 0; px < 8; ++px)
    for (int64_t py = 0; py <= px; ++py) {
      const std::vector<float> q = ours(x, px), k = ours(y, py);
      const std::vector<float> q2 = theirs(wq, bq, x, px), k2 = theirs(wk, bk, y, py);
      for (int64_t h = 0; h < c.n_head; ++h) {
        double dot = 0, dot2 = 0;
        for (int64_t i = 0; i < HS; ++i) {
          dot += static_cast<double>(q[h * HS + i]) * k[C + h * HS + i];
          dot2 += static_cast<double>(q2[h * HS + i]) * k2[h * HS + i];
        }
        INFO("head " << h << " positions " << px << ", " << py);
        CHECK(dot2 == Approx(dot).epsilon(1e-4).margin(1e-4));
      }
    }
  // v, the output projection and the MLP are copied as they are.
  CHECK(f32_of(g.tensors.at("blk.0.attn_v.weight")) == std::vector<float>(w + 2 * C * C, w + 3 * C * C));
  const float* fc = checkpoints::export_param(m.store, "transformer.h.0.mlp.c_fc.weight");
  const int64_t H = 4 * C;
  CHECK(f32_of(g.tensors.at("blk.0.ffn_gate.weight")) == std::vector<float>(fc, fc + H * C));
  CHECK(f32_of(g.tensors.at("blk.0.ffn_up.weight")) == std::vector<float>(fc + H * C, fc + 2 * H * C));
  CHECK(g.tensors.count("output.weight") == 0);  // tied: llama.cpp uses token_embd
}

TEST_CASE("gpt2 export: biases a model lacks are zeros, padded vocabulary rows are unused tokens") {
  nn::GPTConfig c;
  c.vocab_size = 260, c.block_size = 8, c.n_layer = 1, c.n_head = 2, c.n_embd = 16, c.bias = false;
  c.tied = false;
  const nn::GPT m = random_model(c);
  testing::TempDir dir;
  const data::TokenizerSpec tok = data::byte_spec();
  checkpoints::gguf_export(dir.file("g.gguf"), {m.config, m.store, nullptr, tok, "g"}, checkpoints::GgufDtype::F16);
  const Gguf g = read_gguf(dir.file("g.gguf"));
  CHECK(g.kv.at("general.architecture") == "gpt2");
  CHECK(g.kv.at("general.file_type") == "1");
  CHECK(f32_of(g.tensors.at("blk.0.attn_qkv.bias")) == std::vector<float>(48, 0.0f));
  CHECK(f32_of(g.tensors.at("output_norm.bias")) == std::vector<float>(16, 0.0f));
  CHECK(g.tensors.at("blk.0.attn_qkv.weight").type == 1);  // f16 for 2-D
  CHECK(g.tensors.at("blk.0.attn_norm.weight").type == 0);  // f32 for 1-D
  CHECK(g.tensors.at("output.weight").dims == std::vector<uint64_t>{16, 260});
  const std::vector<std::string>& tokens = g.strings.at("tokenizer.ggml.tokens");
  REQUIRE(tokens.size() == 260);
  CHECK((tokens[32] == "Ġ" && tokens[10] == "Ċ" && tokens[65] == "A"));
  CHECK((tokens[256] == "<|endoftext|>" && tokens[257] == "<|unused_257|>"));
  CHECK(g.strings.at("tokenizer.ggml.token_type")[256] == "3");
  CHECK(g.strings.at("tokenizer.ggml.token_type")[259] == "5");
  CHECK(g.kv.at("tokenizer.ggml.eos_token_id") == "256");
  CHECK(g.kv.at("tokenizer.ggml.merges") == "[0]");
}

TEST_CASE("a char or byte LayerNorm model gets a silent end-of-text token: probability 0 whatever the input") {
  nn::GPTConfig c;
  c.vocab_size = 256, c.block_size = 8, c.n_layer = 1, c.n_head = 2, c.n_embd = 16;
  const nn::GPT m = random_model(c);
  testing::TempDir dir;
  const data::TokenizerSpec tok = data::byte_spec();
  const std::string note =
      checkpoints::gguf_export(dir.file("s.gguf"), {m.config, m.store, nullptr, tok, "s"}, checkpoints::GgufDtype::F32);
  CHECK_THAT(note, Catch::Contains("added token 256"));
  const Gguf g = read_gguf(dir.file("s.gguf"));
  const std::vector<std::string>& tokens = g.strings.at("tokenizer.ggml.tokens");
  REQUIRE(tokens.size() == 257);
  CHECK((tokens[256] == "<|endoftext|>" && g.kv.at("tokenizer.ggml.eos_token_id") == "256"));
  CHECK(g.tensors.at("token_embd.weight").dims == std::vector<uint64_t>{16, 257});
  const std::vector<float> out = f32_of(g.tensors.at("output.weight"));
  const float* wte = checkpoints::export_param(m.store, "transformer.wte.weight");
  CHECK(std::vector<float>(out.begin(), out.begin() + 256 * 16) == std::vector<float>(wte, wte + 256 * 16));
  // The row's logit on LayerNorm outputs of random inputs is -2000 each time.
  const float* gain = checkpoints::export_param(m.store, "transformer.ln_f.weight");
  const float* bias = checkpoints::export_param(m.store, "transformer.ln_f.bias");
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int trial = 0; trial < 100; ++trial) {
    float x[16], h[16], mean[1], rstd[1];
    for (float& v : x) v = normal(rng);
    kernels::layernorm_forward(h, mean, rstd, x, gain, bias, 1, 16);
    double logit = 0;
    for (int i = 0; i < 16; ++i) logit += static_cast<double>(out[256 * 16 + i]) * h[i];
    CHECK(logit == Approx(-2000.0).margin(0.1));
  }

  // Without biases there is no such row: llama.cpp's default id 11, said.
  c.bias = false;
  const nn::GPT nb = random_model(c);
  const std::string note2 =
      checkpoints::gguf_export(dir.file("n.gguf"), {nb.config, nb.store, nullptr, tok, "n"}, checkpoints::GgufDtype::F32);
  CHECK_THAT(note2, Catch::Contains("token 11"));
  const Gguf g2 = read_gguf(dir.file("n.gguf"));
  CHECK(g2.strings.at("tokenizer.ggml.tokens").size() == 256);
  CHECK(g2.kv.count("tokenizer.ggml.eos_token_id") == 0);
}

// The family's name, or "refused: " and the refusal.
std::string family_of(const nn::GPTConfig& c) {
  const checkpoints::FamilyChoice f = checkpoints::export_family(c);
  return f.family ? std::string(f.family->name) : "refused: " + f.refusal;
}

TEST_CASE("export_family: each row of the table, and a refusal naming what differs and the nearest choice") {
  nn::GPTConfig c;
  CHECK(family_of(c) == "GPT-2");
  c.pos_encoding = nn::PosEncoding::Sinusoidal;
  CHECK(family_of(c) == "GPT-2");
  c.mlp = nn::MlpKind::Relu2;
  CHECK_THAT(family_of(c), Catch::StartsWith("refused: this model's --mlp relu2 cannot") &&
                               Catch::EndsWith("nearest exportable choice is --mlp gelu (GPT-2 family: GGUF gpt2, "
                                               "Hugging Face GPT2LMHeadModel)"));
  c.norm = nn::NormKind::RMSNorm, c.mlp = nn::MlpKind::Swiglu, c.pos_encoding = nn::PosEncoding::Rope;
  CHECK(family_of(c) == "Llama");
  c.bias = false, c.tied = false;
  CHECK(family_of(c) == "Llama");
  c.bias = true;
  c.mlp = nn::MlpKind::Gelu;  // one step from Llama (--mlp) and from GPT-NeoX (--norm): both named
  CHECK_THAT(family_of(c), Catch::StartsWith("refused: this model's --mlp gelu and --norm rmsnorm cannot") &&
                               Catch::Contains("--mlp swiglu (Llama family") &&
                               Catch::Contains(" or --norm layernorm (GPT-NeoX family: GGUF gptneox, GGUF only)"));
  c.norm = nn::NormKind::LayerNorm;
  CHECK(family_of(c) == "GPT-NeoX");
  CHECK_THAT(checkpoints::hf_refusal(c, data::byte_spec()), Catch::Contains("GGUF only"));
  c.mlp = nn::MlpKind::Swiglu, c.pos_encoding = nn::PosEncoding::Learned;
  CHECK_THAT(family_of(c), Catch::StartsWith("refused: this model's --mlp swiglu cannot"));
  c.mlp = nn::MlpKind::Gelu;
  c.gelu = kernels::GeluKind::Erf;
  CHECK_THAT(checkpoints::gguf_refusal(c, data::byte_spec()), Catch::Contains("--gelu erf"));
  CHECK(checkpoints::hf_refusal(c, data::byte_spec()).empty());  // HF's GPT-2 has erf GELU ("gelu")
  c.gelu = kernels::GeluKind::Tanh;
  c.qk_norm = true;
  CHECK_THAT(family_of(c), Catch::StartsWith("refused: this model's --qk-norm cannot") &&
                               Catch::Contains("no --qk-norm (GPT-2 family"));

  // The --budget recipe: Arcee, without biases only (llama.cpp's has none).
  c = nn::GPTConfig{};
  c.norm = nn::NormKind::RMSNorm, c.mlp = nn::MlpKind::Relu2, c.pos_encoding = nn::PosEncoding::Rope;
  CHECK_THAT(family_of(c), Catch::StartsWith("refused: this model's --mlp relu2 and biases cannot") &&
                               Catch::Contains("--mlp swiglu (Llama family") &&
                               Catch::Contains(" or --no-bias (Arcee family: GGUF arcee, Hugging Face "
                                               "ArceeForCausalLM)"));
  c.bias = false;
  CHECK(family_of(c) == "Arcee");
  c.tied = false;
  CHECK(family_of(c) == "Arcee");
  // ReLU² with QK-norm: Arcee without --qk-norm, or Qwen3 with SwiGLU.
  c.qk_norm = true;
  CHECK_THAT(family_of(c), Catch::StartsWith("refused: this model's --qk-norm and --mlp relu2 cannot") &&
                               Catch::Contains("no --qk-norm (Arcee family") &&
                               Catch::Contains(" or --mlp swiglu (Qwen3 family: GGUF qwen3, Hugging Face "
                                               "Qwen3ForCausalLM)"));
  // QK-norm with SwiGLU: Qwen3, without biases only.
  c.mlp = nn::MlpKind::Swiglu;
  CHECK(family_of(c) == "Qwen3");
  c.bias = true;
  CHECK_THAT(family_of(c), Catch::StartsWith("refused: this model's --qk-norm and biases cannot") &&
                               Catch::Contains("no --qk-norm (Llama family") && Catch::Contains("--no-bias (Qwen3"));
  // A choice no family names (--logit-softcap): refused in every family,
  // the nearest named as the same model without it.
  c.bias = false, c.qk_norm = false, c.mlp = nn::MlpKind::Relu2;
  c.logit_softcap = 15.0f;
  CHECK_THAT(family_of(c), Catch::StartsWith("refused: this model's --logit-softcap 15 cannot") &&
                               Catch::EndsWith("nearest exportable choice is no --logit-softcap (Arcee family: GGUF "
                                               "arcee, Hugging Face ArceeForCausalLM)"));
}

TEST_CASE("arcee and qwen3 export: the table's tensors, arcee's q and k reordered, qwen3's q/k norms ones") {
  nn::GPTConfig c;
  c.vocab_size = 256, c.block_size = 8, c.n_layer = 2, c.n_head = 2, c.n_embd = 16, c.bias = false;
  c.norm = nn::NormKind::RMSNorm, c.mlp = nn::MlpKind::Relu2, c.pos_encoding = nn::PosEncoding::Rope;
  testing::TempDir dir;
  const data::TokenizerSpec tok = data::byte_spec();
  const int64_t C = c.n_embd, H = 4 * C;
  {
    const nn::GPT m = random_model(c);
    checkpoints::gguf_export(dir.file("a.gguf"), {m.config, m.store, nullptr, tok, "a"}, checkpoints::GgufDtype::F32);
    const Gguf g = read_gguf(dir.file("a.gguf"));
    CHECK(g.kv.at("general.architecture") == "arcee");
    CHECK(g.kv.at("arcee.feed_forward_length") == std::to_string(H));
    CHECK(g.kv.at("arcee.attention.layer_norm_rms_epsilon") == std::to_string(kernels::kRMSNormEps));
    CHECK(g.kv.at("arcee.rope.dimension_count") == "8");
    const float* qkv = checkpoints::export_param(m.store, "transformer.h.1.attn.c_attn.weight");
    CHECK(f32_of(g.tensors.at("blk.1.attn_q.weight")) == checkpoints::rope_rows(qkv, 0, C, C, c.n_head));
    CHECK(f32_of(g.tensors.at("blk.1.attn_k.weight")) == checkpoints::rope_rows(qkv, C, C, C, c.n_head));
    CHECK(f32_of(g.tensors.at("blk.1.attn_v.weight")) == std::vector<float>(qkv + 2 * C * C, qkv + 3 * C * C));
    const float* fc = checkpoints::export_param(m.store, "transformer.h.1.mlp.c_fc.weight");
    CHECK(f32_of(g.tensors.at("blk.1.ffn_up.weight")) == std::vector<float>(fc, fc + H * C));
    CHECK(g.tensors.at("blk.1.ffn_down.weight").dims == std::vector<uint64_t>{static_cast<uint64_t>(H), 16});
    CHECK(g.tensors.count("blk.1.ffn_gate.weight") == 0);
    CHECK(g.tensors.count("output.weight") == 0);  // tied
    CHECK(g.tensors.size() == 1 + 2 * 8 + 1);
  }
  c.mlp = nn::MlpKind::Swiglu, c.qk_norm = true, c.tied = false;
  {
    const nn::GPT m = random_model(c);
    checkpoints::gguf_export(dir.file("q.gguf"), {m.config, m.store, nullptr, tok, "q"}, checkpoints::GgufDtype::F16);
    const Gguf g = read_gguf(dir.file("q.gguf"));
    CHECK(g.kv.at("general.architecture") == "qwen3");
    CHECK(g.kv.at("qwen3.attention.layer_norm_rms_epsilon") == std::to_string(kernels::kRMSNormEps));
    CHECK(g.kv.at("qwen3.attention.head_count_kv") == "2");
    CHECK(f32_of(g.tensors.at("blk.0.attn_q_norm.weight")) == std::vector<float>(8, 1.0f));
    CHECK(f32_of(g.tensors.at("blk.1.attn_k_norm.weight")) == std::vector<float>(8, 1.0f));
    // qwen3's RoPE rotates rotate_half pairs, as ours: q as it is (here in float16).
    const Gguf::Tensor& q = g.tensors.at("blk.0.attn_q.weight");
    REQUIRE(q.type == 1);
    const float* qkv = checkpoints::export_param(m.store, "transformer.h.0.attn.c_attn.weight");
    uint16_t half;
    std::memcpy(&half, q.data + 2 * 37, 2);
    bool overflow = false;
    CHECK(half == checkpoints::f16_from_f32(qkv[37], &overflow));
    CHECK(g.tensors.count("blk.0.ffn_gate.weight") == 1);
    CHECK(g.tensors.count("output.weight") == 1);  // untied
    CHECK(g.tensors.size() == 1 + 2 * 11 + 2);
  }
}

TEST_CASE("byte-level vocabularies: char merges join each character's bytes; gpt2 keeps its aliases") {
  const data::TokenizerSpec chars = data::char_spec_from_text("a é€\n");
  const checkpoints::ByteLevelVocab v = checkpoints::byte_level_vocab(chars);
  CHECK(v.tokens == std::vector<std::string>{"Ċ", "Ġ", "a", "Ã©", "âĤ¬"});
  CHECK(v.merges == std::vector<std::string>{"Ã ©", "â Ĥ", "âĤ ¬"});
  // Every symbol a merge joins that is no token is a piece, once.
  CHECK(v.pieces == std::vector<std::string>{"Ã", "©", "â", "Ĥ", "âĤ", "¬"});
  CHECK(v.end_of_text == -1);
  CHECK(checkpoints::byte_level_vocab(data::gpt2_spec()).pieces.empty());

  const checkpoints::ByteLevelVocab g = checkpoints::byte_level_vocab(data::gpt2_spec());
  CHECK(g.tokens.size() == 50257);
  CHECK(g.end_of_text == 50256);
  CHECK((g.merges[0] == "Ġ t" && g.merges[1] == "Ġ a"));
  // GPT-2's 50000 merges, one pair replaced by the later merge sharing its
  // comma key, plus the aliased pairs (Note [gpt-3-encoder comma keys]).
  CHECK(g.merges.size() > 50000);
  CHECK(g.merges.size() < 50020);
  CHECK(!checkpoints::byte_level_refusal({"bpe", {}, {}}).empty());
}

TEST_CASE("byte-level vocabularies: a trained bpe needs the gpt2 split and distinct token bytes") {
  data::TokenizerSpec bpe = data::bpe_train("the cat\nthe hat\n\nthe bat", 262, nullptr, "gpt2");
  REQUIRE(bpe.split == "gpt2");
  CHECK(checkpoints::byte_level_refusal(bpe).empty());
  const checkpoints::ByteLevelVocab v = checkpoints::byte_level_vocab(bpe);
  CHECK(v.tokens.size() == 262);
  CHECK((v.tokens[32] == "Ġ" && v.tokens[10] == "Ċ" && v.tokens[97] == "a"));
  REQUIRE(v.merges.size() == 6);
  for (size_t r = 0; r < 6; ++r) {  // merge r at rank r, spelled as its two tokens
    const auto [left, right] = bpe.merges[r];
    CHECK(v.merges[r] == v.tokens[left] + " " + v.tokens[right]);
    CHECK(v.tokens[256 + r] == checkpoints::byte_level_spelling(bpe.tokens[left] + bpe.tokens[right]));
  }
  CHECK(v.end_of_text == -1);  // no special tokens

  bpe.split = "";  // byte-class: refused, saying how to get an exportable one
  CHECK_THAT(checkpoints::byte_level_refusal(bpe), Catch::Contains("--tokenizer bpe --bpe-split gpt2"));
  // "abc" as (ab, c) and as (a, bc): valid for our encoder, not nameable by bytes.
  data::TokenizerSpec twins = data::byte_spec();
  twins.type = "bpe";
  twins.split = "gpt2";
  twins.merges = {{'a', 'b'}, {'b', 'c'}, {256, 'c'}, {'a', 257}};
  for (const char* t : {"ab", "bc", "abc", "abc"}) twins.tokens.push_back(t);
  CHECK_NOTHROW(data::make_tokenizer(twins));
  CHECK_THAT(checkpoints::byte_level_refusal(twins), Catch::Contains("bpe tokens 258 and 259 stand for the same bytes"));
}
