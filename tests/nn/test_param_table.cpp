// The parameter table: its count against nanoGPT's formula and GPT-2's known
// sizes, its layout in the flat buffers, the views bound from it by role, and
// the `tapegpt params` rows read off it. (Its names against PyTorch's
// state_dict: test_param_names.py.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>

#include "autograd/kernels/bf16.h"
#include "autograd/kernels/split_master.h"
#include "model_fixture.h"
#include "nn/gpt.h"
#include "nn/params.h"
#include "support/no_skip.h"
#include "train/params_report.h"

namespace {

nn::GPTConfig config(bool tied, bool bias, nn::PosEncoding pos) {
  nn::GPTConfig c = testing::tiny_config();
  c.tied = tied;
  c.bias = bias;
  c.pos_encoding = pos;
  return c;
}

// All eight tied/bias/position combinations.
std::vector<nn::GPTConfig> every_variant() {
  std::vector<nn::GPTConfig> out;
  for (bool tied : {true, false})
    for (bool bias : {true, false})
      for (nn::PosEncoding pos : {nn::PosEncoding::Learned, nn::PosEncoding::Sinusoidal})
        out.push_back(config(tied, bias, pos));
  return out;
}

// Counted by hand, as nanoGPT's model builds it: per block ln_1, c_attn
// (3C²), c_proj (C²), ln_2, c_fc (4C²), mlp.c_proj (4C²) and, with biases,
// ln_1, ln_2 (C each) and the linear biases (3C + C + 4C + C).
int64_t formula(const nn::GPTConfig& c) {
  const int64_t V = c.vocab_size, T = c.block_size, C = c.n_embd, L = c.n_layer;
  int64_t n = V * C + L * (12 * C * C + 2 * C) + C;
  if (c.bias) n += L * (2 * C + 9 * C) + C;
  if (c.pos_encoding == nn::PosEncoding::Learned) n += T * C;
  if (!c.tied) n += V * C;
  return n;
}

std::string describe(const nn::GPTConfig& c) {
  return std::string(c.tied ? "tied" : "untied") + (c.bias ? ", bias" : ", no bias") + ", " +
         nn::pos_encoding_name(c.pos_encoding);
}

}  // namespace

TEST_CASE("the parameter table sums to the parameter count", "[params]") {
  for (const nn::GPTConfig& c : every_variant()) {
    INFO(describe(c));
    const nn::ParamLayout layout = nn::param_layout(c);
    int64_t sum = 0;
    for (const nn::ParamInfo& p : layout.table) {
      int64_t numel = 1;
      for (int64_t d : p.shape) numel *= d;
      CHECK(p.numel == numel);
      sum += p.numel;
    }
    CHECK(sum == formula(c));
    CHECK(layout.num_parameters() == sum);
    CHECK(nn::gpt_create(c).num_parameters() == sum);
    int64_t rows = 0;
    for (const train::ParamsReportRow& r : train::params_report_exact_rows(c)) rows += r.parameters;
    CHECK(rows == sum);
  }
}

TEST_CASE("GPT-2's published sizes", "[params]") {
  // (n_layer, n_embd, parameters) of GPT-2 small, medium, large and XL with
  // GPT-2's vocabulary, 1024 positions, biases and a tied head.
  for (const auto& [L, C, n] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {12, 768, 124439808}, {24, 1024, 354823168}, {36, 1280, 774030080}, {48, 1600, 1557611200}}) {
    nn::GPTConfig c;
    c.vocab_size = 50257;
    c.block_size = 1024;
    c.n_layer = L;
    c.n_head = C / 64;
    c.n_embd = C;
    CHECK(nn::param_layout(c).num_parameters() == n);
  }
}

TEST_CASE("the layout: decayed tensors first, aligned, disjoint", "[params]") {
  for (const nn::GPTConfig& c : every_variant()) {
    INFO(describe(c));
    const nn::ParamLayout layout = nn::param_layout(c);
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (const nn::ParamInfo& p : layout.table) {
      CHECK(p.decay == (p.shape.size() == 2));
      CHECK(p.offset % 16 == 0);
      CHECK((p.offset < layout.n_decay) == p.decay);
      CHECK(p.offset + p.numel <= layout.total);
      spans.emplace_back(p.offset, p.offset + p.numel);
    }
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) CHECK(spans[i - 1].second <= spans[i].first);
  }
}

TEST_CASE("one entry per role and layer; every block complete", "[params]") {
  for (const nn::GPTConfig& c : every_variant()) {
    INFO(describe(c));
    const nn::ParamLayout layout = nn::param_layout(c);
    std::set<std::pair<nn::ParamRole, int64_t>> seen;
    std::vector<int> per_block(static_cast<size_t>(c.n_layer), 0);
    for (const nn::ParamInfo& p : layout.table) {
      CHECK(seen.insert({p.role, p.layer}).second);
      CHECK(p.layer >= -1);
      CHECK(p.layer < c.n_layer);
      if (p.layer >= 0) {
        CHECK(p.name.rfind("transformer.h." + std::to_string(p.layer) + ".", 0) == 0);
        ++per_block[static_cast<size_t>(p.layer)];
      }
    }
    for (int n : per_block) CHECK(n == (c.bias ? 12 : 6));
  }
}

TEST_CASE("views are bound by role to their table entries", "[params]") {
  for (const nn::GPTConfig& c : every_variant()) {
    INFO(describe(c));
    nn::GPT m = nn::gpt_create(c);
    // Each name with the view the forward pass reads for it.
    std::vector<std::pair<std::string, const nn::Tensor*>> want = {
        {"transformer.wte.weight", &m.wte}, {"transformer.ln_f.weight", &m.ln_f_weight}};
    if (c.pos_encoding == nn::PosEncoding::Learned) want.push_back({"transformer.wpe.weight", &m.wpe});
    if (c.bias) want.push_back({"transformer.ln_f.bias", &m.ln_f_bias});
    if (!c.tied) want.push_back({"lm_head.weight", &m.lm_head});
    for (int64_t l = 0; l < c.n_layer; ++l) {
      const std::string h = "transformer.h." + std::to_string(l) + ".";
      const nn::BlockWeights& b = m.blocks[static_cast<size_t>(l)];
      for (const auto& [name, view] : std::vector<std::pair<std::string, const nn::Tensor*>>{
               {"ln_1.weight", &b.ln_1_weight}, {"attn.c_attn.weight", &b.c_attn_weight},
               {"attn.c_proj.weight", &b.attn_proj_weight}, {"ln_2.weight", &b.ln_2_weight},
               {"mlp.c_fc.weight", &b.c_fc_weight}, {"mlp.c_proj.weight", &b.mlp_proj_weight}})
        want.push_back({h + name, view});
      if (!c.bias) {
        for (const nn::Tensor* t : {&b.ln_1_bias, &b.c_attn_bias, &b.attn_proj_bias, &b.ln_2_bias,
                                    &b.c_fc_bias, &b.mlp_proj_bias})
          CHECK(!t->defined());
        continue;
      }
      for (const auto& [name, view] : std::vector<std::pair<std::string, const nn::Tensor*>>{
               {"ln_1.bias", &b.ln_1_bias}, {"attn.c_attn.bias", &b.c_attn_bias},
               {"attn.c_proj.bias", &b.attn_proj_bias}, {"ln_2.bias", &b.ln_2_bias},
               {"mlp.c_fc.bias", &b.c_fc_bias}, {"mlp.c_proj.bias", &b.mlp_proj_bias}})
        want.push_back({h + name, view});
    }
    CHECK(want.size() == m.store.table.size());
    for (const auto& [name, view] : want) {
      INFO(name);
      const nn::ParamInfo* p = m.store.find(name);
      REQUIRE(p != nullptr);
      CHECK(view->data == m.store.values.floats() + p->offset);
      CHECK(view->grad == m.store.grads.data() + p->offset);
      CHECK(std::vector<int64_t>(view->shape.begin(), view->shape.begin() + view->ndim) == p->shape);
    }
    if (c.tied) CHECK(m.lm_head.data == m.wte.data);
    if (c.pos_encoding == nn::PosEncoding::Sinusoidal) {
      CHECK(m.wpe.data == m.sinusoid.data());
      CHECK(!m.wpe.needs_grad());
    }
  }
}

// ---- the model choices (Note [Model choices] in nn/config.h) --------------

TEST_CASE("model choices: every name parses back and prints the same", "[config]") {
  const std::vector<std::pair<std::string, std::vector<std::string>>> expected = {
      {"norm", {"layernorm", "rmsnorm"}},
      {"pos_encoding", {"learned", "sinusoidal", "rope"}},
      {"mlp", {"gelu", "relu2", "swiglu"}},
      {"gelu", {"tanh", "erf"}},
      {"qk_norm", {"off", "on"}},
      {"logit_softcap", {"off", "15", "20", "30"}}};
  REQUIRE(nn::model_choices().size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const nn::ModelChoice& row = nn::model_choices()[i];
    INFO(row.key);
    CHECK(row.key == expected[i].first);
    CHECK(&nn::model_choice(row.key) == &row);
    REQUIRE(row.names.size() == expected[i].second.size());
    // The defaults are today's model: LayerNorm, learned positions, GELU (tanh).
    CHECK(nn::choice_name(row, nn::GPTConfig{}) == std::string(row.names[0]));
    for (const std::string& name : expected[i].second) {
      nn::GPTConfig c;
      REQUIRE(nn::choice_parse(row, name, &c));
      CHECK(nn::choice_name(row, c) == name);
    }
    nn::GPTConfig c;
    const nn::GPTConfig before = c;
    CHECK_FALSE(nn::choice_parse(row, "nope", &c));
    CHECK_FALSE(nn::choice_parse(row, "", &c));
    CHECK(row.get(c) == row.get(before));  // unchanged on failure
  }
  CHECK(nn::choice_list(nn::model_choice("pos_encoding")) == "'learned', 'sinusoidal' or 'rope'");
  CHECK(nn::choice_list(nn::model_choice("norm")) == "'layernorm' or 'rmsnorm'");
  CHECK(nn::choice_alternatives(nn::model_choice("mlp")) == "gelu | relu2 | swiglu");

  // The typed functions agree with the table.
  nn::NormKind norm{};
  CHECK(nn::norm_parse("rmsnorm", &norm));
  CHECK(norm == nn::NormKind::RMSNorm);
  CHECK(nn::norm_name(nn::NormKind::LayerNorm) == std::string("layernorm"));
  nn::MlpKind mlp{};
  CHECK(nn::mlp_parse("swiglu", &mlp));
  CHECK(mlp == nn::MlpKind::Swiglu);
  CHECK(nn::mlp_name(nn::MlpKind::Relu2) == std::string("relu2"));
  nn::PosEncoding pos{};
  CHECK(nn::pos_encoding_parse("rope", &pos));
  CHECK(pos == nn::PosEncoding::Rope);
  CHECK(nn::pos_encoding_name(nn::PosEncoding::Sinusoidal) == std::string("sinusoidal"));
  CHECK_FALSE(nn::mlp_parse("relu", &mlp));
  CHECK(nn::gelu_name(kernels::GeluKind::Erf) == std::string("erf"));
}

TEST_CASE("config_error: RoPE needs an even head size", "[config]") {
  nn::GPTConfig c = testing::tiny_config();  // C 16, NH 2: HS 8
  c.pos_encoding = nn::PosEncoding::Rope;
  CHECK(nn::config_error(c).empty());
  c.n_embd = 6;
  c.n_head = 2;  // HS 3
  const std::string err = nn::config_error(c);
  CHECK(err.find("rope") != std::string::npos);
  CHECK(err.find("even head size") != std::string::npos);
  c.n_head = 3;  // HS 2
  CHECK(nn::config_error(c).empty());
  // Other choices put no condition on the shape.
  c = testing::tiny_config();
  c.n_embd = 6;
  c.n_head = 2;
  c.norm = nn::NormKind::RMSNorm;
  c.mlp = nn::MlpKind::Swiglu;
  CHECK(nn::config_error(c).empty());
}

TEST_CASE("parameter table of each model choice", "[params]") {
  for (bool bias : {true, false}) {
    const nn::GPTConfig base = config(true, bias, nn::PosEncoding::Learned);
    const int64_t C = base.n_embd, T = base.block_size, L = base.n_layer;
    const nn::ParamLayout plain = nn::param_layout(base);
    auto shape_of = [](const nn::ParamLayout& layout, const std::string& name) {
      const nn::ParamInfo* p = layout.find(name);
      return p ? p->shape : std::vector<int64_t>{};
    };
    INFO("bias " << bias);

    {  // rmsnorm: gains only, no ln biases even with config.bias
      nn::GPTConfig c = base;
      c.norm = nn::NormKind::RMSNorm;
      const nn::ParamLayout layout = nn::param_layout(c);
      for (const std::string ln : {"transformer.h.0.ln_1", "transformer.h.1.ln_2", "transformer.ln_f"}) {
        CHECK(shape_of(layout, ln + ".weight") == std::vector<int64_t>{C});
        CHECK(layout.find(ln + ".bias") == nullptr);
      }
      CHECK(layout.num_parameters() == plain.num_parameters() - (bias ? (2 * L + 1) * C : 0));
      CHECK((layout.find("transformer.h.0.attn.c_attn.bias") != nullptr) == bias);  // linear biases kept
      int gains = 0;
      for (const nn::ParamInfo& p : layout.table) gains += nn::is_layernorm_weight(p.role);
      CHECK(gains == 2 * L + 1);
      int64_t rows = 0;
      for (const train::ParamsReportRow& r : train::params_report_exact_rows(c)) {
        rows += r.parameters;
        CHECK(r.kind != "LayerNorm biases");
        CHECK(r.kind != "LayerNorm weights");
      }
      CHECK(rows == layout.num_parameters());
    }
    {  // rope: no wpe
      nn::GPTConfig c = base;
      c.pos_encoding = nn::PosEncoding::Rope;
      const nn::ParamLayout layout = nn::param_layout(c);
      CHECK(layout.find("transformer.wpe.weight") == nullptr);
      CHECK(layout.num_parameters() == plain.num_parameters() - T * C);
      nn::GPT m = nn::gpt_create(c);
      CHECK(!m.wpe.defined());
      int64_t rows = 0;
      for (const train::ParamsReportRow& r : train::params_report_exact_rows(c)) rows += r.parameters;
      CHECK(rows == layout.num_parameters());
    }
    {  // relu2: the same table as gelu
      nn::GPTConfig c = base;
      c.mlp = nn::MlpKind::Relu2;
      const nn::ParamLayout layout = nn::param_layout(c);
      REQUIRE(layout.table.size() == plain.table.size());
      for (size_t i = 0; i < layout.table.size(); ++i) {
        CHECK(layout.table[i].name == plain.table[i].name);
        CHECK(layout.table[i].shape == plain.table[i].shape);
      }
    }
    {  // swiglu: c_fc [2·4C, C], c_proj still [C, 4C]
      nn::GPTConfig c = base;
      c.mlp = nn::MlpKind::Swiglu;
      const nn::ParamLayout layout = nn::param_layout(c);
      CHECK(nn::mlp_hidden(c) == 4 * C);
      CHECK(nn::mlp_up_rows(c) == 8 * C);
      CHECK(nn::mlp_up_rows(base) == 4 * C);
      for (int64_t l = 0; l < L; ++l) {
        const std::string h = "transformer.h." + std::to_string(l) + ".mlp.";
        CHECK(shape_of(layout, h + "c_fc.weight") == std::vector<int64_t>{8 * C, C});
        CHECK(shape_of(layout, h + "c_proj.weight") == std::vector<int64_t>{C, 4 * C});
        if (bias) CHECK(shape_of(layout, h + "c_fc.bias") == std::vector<int64_t>{8 * C});
        else CHECK(layout.find(h + "c_fc.bias") == nullptr);
      }
      CHECK(layout.num_parameters() == plain.num_parameters() + L * (4 * C * C + (bias ? 4 * C : 0)));
      CHECK(nn::matmul_parameters(c) == nn::matmul_parameters(base) + L * 4 * C * C);
      nn::GPT m = nn::gpt_create(c);
      CHECK(m.blocks[0].c_fc_weight.size(0) == 8 * C);
      int64_t rows = 0;
      for (const train::ParamsReportRow& r : train::params_report_exact_rows(c)) rows += r.parameters;
      CHECK(rows == layout.num_parameters());
    }
  }
}

// Whether calling f in a child process aborts it (a TG_CHECK refusing).
template <class F>
bool aborts(F f) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (!std::freopen("/dev/null", "w", stderr)) _exit(2);  // the refusal's message is expected
    f();
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

TEST_CASE("a bf16 store keeps its 2-D masters as two planes and never gives them as floats", "[params][bf16]") {
  if (!kernels::bf16_matmul_available()) {
    if (test_support::no_skip()) FAIL("oneDNN has no bf16 matmul here, under TAPEGPT_NO_SKIP=1");
    WARN("oneDNN has no bf16 matmul here: a bf16 store cannot be made");
    return;
  }
  nn::GPT m = nn::gpt_create(testing::tiny_config());
  nn::gpt_init(m, 3);
  nn::ParameterStore& s = m.store;
  const std::vector<float> before(s.values.floats(), s.values.floats() + s.total);
  const auto n = static_cast<size_t>(s.n_decay);

  nn::set_precision(s, autograd::Precision::Bf16);
  REQUIRE(s.precision() == autograd::Precision::Bf16);
  CHECK(s.values.split().n == s.n_decay);
  std::vector<float> joined(n);
  kernels::join_master(joined.data(), s.values.hi(), s.values.lo(), s.n_decay);
  CHECK(std::memcmp(joined.data(), before.data(), n * sizeof(float)) == 0);
  CHECK(std::memcmp(s.values.vectors(), before.data() + n, (before.size() - n) * sizeof(float)) == 0);
  // The run reads a weight's bf16 copy from the hi plane, found by its view.
  const autograd::RunPrecision run = nn::run_precision(s);
  const nn::ParamInfo& qkv = s.first(nn::ParamRole::QkvWeight);
  CHECK(run.bf16_copy(m.blocks[0].c_attn_weight) == s.values.hi() + qkv.offset);
  // Asked for floats, a split store refuses rather than hand out bf16 bytes.
  CHECK(aborts([&] { (void)s.values.floats(); }));
  CHECK(aborts([&] { (void)s.param(qkv.name); }));
  CHECK_FALSE(aborts([&] { (void)s.param(s.first(nn::ParamRole::FinalNormWeight).name); }));

  nn::set_precision(s, autograd::Precision::Fp32);  // joined back: the same bits
  CHECK(std::memcmp(s.values.floats(), before.data(), before.size() * sizeof(float)) == 0);
  CHECK(aborts([&] { (void)s.values.hi(); }));
}
