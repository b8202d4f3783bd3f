// train::Muon over a whole parameter store (Note [Muon] in
// train/optimizer.h): Muon for the blocks' matrices, AdamW at the scaled
// learning rate for the rest, each tensor exactly as its kernel updates it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <omp.h>

#include "autograd/kernels/bf16.h"
#include "autograd/kernels/kernels.h"
#include "nn/gpt.h"
#include "nn/model_fixture.h"
#include "support/no_skip.h"
#include "train/optimizer.h"
#include "train/precision.h"

TEST_CASE("Muon updates the blocks' matrices, AdamW the rest, each as its kernel", "[muon]") {
  for (const bool swiglu : {false, true}) {
    INFO("swiglu " << swiglu);
    nn::GPTConfig c = testing::tiny_config();
    c.tied = false;  // an lm_head too: AdamW's
    if (swiglu) c.mlp = nn::MlpKind::Swiglu;
    nn::GPT m = testing::tiny_model(c);
    nn::ParameterStore& s = m.store;
    tg::Rng rng(9);
    for (const nn::ParamInfo& p : s.table)
      for (int64_t i = 0; i < p.numel; ++i) {
        s.grads.data()[p.offset + i] = static_cast<float>(rng.normal());
        s.m.data()[p.offset + i] = static_cast<float>(0.1 * rng.normal());
      }
    const nn::ParameterStore before = [&] {
      nn::ParameterStore copy = nn::parameter_store_create(c);
      std::copy(s.values.floats(), s.values.floats() + s.total, copy.values.floats());
      std::copy(s.grads.data(), s.grads.data() + s.total, copy.grads.data());
      std::copy(s.m.data(), s.m.data() + s.total, copy.m.data());
      return copy;
    }();
    train::MuonConfig cfg;
    cfg.momentum = 0.9f;
    cfg.adamw_lr = 4e-3;
    const double peak = 0.02;
    const float lr = 0.01f, clip = 0.5f;  // half-way down the schedule, clipping
    const int64_t step = 3;
    train::AdamWConfig adamw;
    train::Muon muon(s, cfg, peak);
    muon.update(s, adamw, lr, step, clip);

    std::set<std::string> muon_names;
    const float adamw_lr = static_cast<float>(static_cast<double>(lr) * (cfg.adamw_lr / peak));
    for (const nn::ParamInfo& p : s.table) {
      INFO(p.name);
      std::vector<float> param(before.values.floats() + p.offset, before.values.floats() + p.offset + p.numel),
          grad(before.grads.data() + p.offset, before.grads.data() + p.offset + p.numel),
          mom(before.m.data() + p.offset, before.m.data() + p.offset + p.numel), v(static_cast<size_t>(p.numel));
      const bool is_muon = train::muon_owns(p.role);
      if (is_muon) {
        muon_names.insert(p.name.substr(p.name.find('.', std::string("transformer.h.").size()) + 1));
        std::vector<float> scratch(static_cast<size_t>(kernels::muon_scratch_floats(p.shape[0], p.shape[1])));
        kernels::muon_update(param.data(), mom.data(), grad.data(), scratch.data(), p.shape[0], p.shape[1], lr,
                             cfg.momentum, adamw.weight_decay, clip);
      } else {
        kernels::adamw_update(param.data(), mom.data(), v.data(), grad.data(), p.numel, adamw_lr, adamw.beta1,
                              adamw.beta2, adamw.eps, p.decay ? adamw.weight_decay : 0.0f, step, clip);
      }
      CHECK(std::equal(param.begin(), param.end(), s.values.floats() + p.offset));
      CHECK(std::equal(mom.begin(), mom.end(), s.m.data() + p.offset));
      // Muon keeps no second moment: v stays zero (Note [Muon]).
      CHECK(std::equal(v.begin(), v.end(), s.v.data() + p.offset));
      CHECK(std::all_of(s.grads.data() + p.offset, s.grads.data() + p.offset + p.numel,
                        [](float g) { return g == 0.0f; }));
    }
    CHECK(muon_names == std::set<std::string>{"attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight",
                                              "mlp.c_proj.weight"});
  }
}

TEST_CASE("Muon's update has the same bits on any thread count", "[muon]") {
  // Note [Muon across threads]: the matrices spread over the threads, each
  // whole on one, its kernels' loops inactive inside. Wide enough (192)
  // that those loops run in parallel when called alone; float32 and bf16.
  std::vector<train::Precision> precisions = {train::Precision::Fp32};
  if (kernels::bf16_matmul_available()) precisions.push_back(train::Precision::Bf16);
  else if (test_support::no_skip()) FAIL("oneDNN has no bf16 matmul here, under TAPEGPT_NO_SKIP=1");
  for (const train::Precision precision : precisions) {
    INFO(train::precision_name(precision));
    nn::GPTConfig c = testing::tiny_config();
    c.n_layer = 2;
    c.n_embd = 192;
    c.n_head = 3;
    auto updated = [&](int threads) {
      nn::GPT m = testing::tiny_model(c, 5, 1.0f);
      nn::ParameterStore& s = m.store;
      tg::Rng rng(11);
      for (int64_t i = 0; i < s.total; ++i) s.grads.data()[i] = static_cast<float>(rng.normal());
      nn::set_precision(s, precision);
      train::Muon muon(s, train::MuonConfig{}, 0.02);
      const int before = omp_get_max_threads();
      omp_set_num_threads(threads);
      for (int64_t step = 1; step <= 2; ++step) {
        muon.update(s, train::AdamWConfig{}, 0.02f, step, 1.0f);
        for (int64_t i = 0; i < s.total; ++i) s.grads.data()[i] = static_cast<float>(rng.normal());
      }
      omp_set_num_threads(before);
      nn::set_precision(s, train::Precision::Fp32);  // the masters joined, to compare
      return std::vector<float>(s.values.floats(), s.values.floats() + s.total);
    };
    const std::vector<float> one = updated(1), three = updated(3);
    CHECK(std::equal(one.begin(), one.end(), three.begin()));
  }
}

TEST_CASE("optimizer names", "[muon]") {
  train::OptimizerKind k = train::OptimizerKind::AdamW;
  CHECK(train::optimizer_parse("muon", &k));
  CHECK(k == train::OptimizerKind::Muon);
  CHECK(std::string(train::optimizer_name(k)) == "muon");
  CHECK_FALSE(train::optimizer_parse("Muon", &k));
  CHECK(k == train::OptimizerKind::Muon);
  CHECK(train::optimizer_parse("adamw", &k));
  CHECK(std::string(train::optimizer_name(k)) == "adamw");
}
