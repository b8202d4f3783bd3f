// The training-flag table (Note [Training flags]): the checkpoint's
// /train/flags keep their names, types and order; every saved flag reads
// back; a resumed run may change only the flags it always could.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "autograd/base/errors.h"
#include "autograd/kernels/bf16.h"
#include "train/precision.h"
#include "train/train_flags.h"

TEST_CASE("/train/flags keeps its names and order", "[flags]") {
  // The order is part of the file (HDF5 tracks attribute creation order).
  const std::vector<std::string> expected = {
      "data", "batch_size", "grad_accum", "max_steps", "lr", "min_lr", "warmup",
      "lr_decay_steps", "weight_decay", "beta1", "beta2", "eps", "grad_clip", "seed",
      "sampler", "eval_interval", "eval_steps", "ckpt_interval", "keep", "optimizer", "adamw_lr",
      "muon_momentum", "lr_schedule", "lr_decay_frac", "zero_init_proj", "preset", "precision", "budget", "budget_fit", "budget_plan",
      "budget_spent_s", "budget_deadline_s", "budget_hard_deadline_s"};
  const std::vector<checkpoints::Flag> flags = train::options_to_flags(train::default_options());
  std::vector<std::string> names;
  for (const checkpoints::Flag& f : flags) names.push_back(f.name);
  CHECK(names == expected);
}

TEST_CASE("every saved flag reads back into the same options", "[flags]") {
  train::TrainOptions o = train::default_options();
  o.data_dir = "some/dir";
  o.batch_size = 7;
  o.grad_accum = 3;
  o.max_steps = 123;
  o.schedule = {2e-3, 1e-5, 11, 99};
  o.adamw = {0.8f, 0.9f, 1e-6f, 0.05f, 0.5f};
  o.seed = 0xfedcba9876543210ULL;  // above INT64_MAX: saved as its bits
  o.sampler = "sequential";
  o.eval_interval = 4;
  o.eval_steps = 5;
  o.ckpt_interval = 6;
  o.keep = 7;
  o.schedule.shape = train::LrShape::Wsd;
  o.schedule.decay_frac = 0.35;
  o.zero_init_proj = true;
  o.preset = "shakespeare-fast";
  o.optimizer = train::OptimizerKind::Muon;
  o.muon = {0.9f, 1.5e-3};
  train::TrainOptions back;
  train::options_from_flags(train::options_to_flags(o), &back);
  CHECK(back.data_dir == o.data_dir);
  CHECK(back.batch_size == o.batch_size);
  CHECK(back.grad_accum == o.grad_accum);
  CHECK(back.max_steps == o.max_steps);
  CHECK(back.schedule.lr == o.schedule.lr);
  CHECK(back.schedule.min_lr == o.schedule.min_lr);
  CHECK(back.schedule.warmup == o.schedule.warmup);
  CHECK(back.schedule.decay_steps == o.schedule.decay_steps);
  CHECK(back.adamw.beta1 == o.adamw.beta1);
  CHECK(back.adamw.beta2 == o.adamw.beta2);
  CHECK(back.adamw.eps == o.adamw.eps);
  CHECK(back.adamw.weight_decay == o.adamw.weight_decay);
  CHECK(back.adamw.grad_clip == o.adamw.grad_clip);
  CHECK(back.seed == o.seed);
  CHECK(back.sampler == o.sampler);
  CHECK(back.eval_interval == o.eval_interval);
  CHECK(back.eval_steps == o.eval_steps);
  CHECK(back.ckpt_interval == o.ckpt_interval);
  CHECK(back.keep == o.keep);
  CHECK(back.schedule.shape == train::LrShape::Wsd);
  CHECK(back.schedule.decay_frac == 0.35);
  CHECK(back.zero_init_proj);
  CHECK(back.preset == "shakespeare-fast");
  CHECK(back.optimizer == o.optimizer);
  CHECK(back.muon.momentum == o.muon.momentum);
  CHECK(back.muon.adamw_lr == o.muon.adamw_lr);
}

TEST_CASE("a checkpoint from before the time-to-loss flags resumes with today's behaviour", "[flags]") {
  // Files written before lr_schedule, lr_decay_frac and zero_init_proj were
  // saved lack them: the defaults (cosine, no zero init) are what they ran.
  std::vector<checkpoints::Flag> old = train::options_to_flags(train::default_options());
  old.erase(std::remove_if(old.begin(), old.end(), [](const checkpoints::Flag& f) {
              return f.name == "lr_schedule" || f.name == "lr_decay_frac" || f.name == "zero_init_proj" ||
                     f.name == "preset";
            }),
            old.end());
  train::TrainOptions o;
  o.schedule.shape = train::LrShape::Wsd;  // what options_from_flags must not touch
  train::TrainOptions back = o;
  train::options_from_flags(old, &back);
  CHECK(back.schedule.shape == train::LrShape::Wsd);
  train::TrainOptions fresh;
  train::options_from_flags(old, &fresh);
  CHECK(fresh.schedule.shape == train::LrShape::Cosine);
  CHECK_FALSE(fresh.zero_init_proj);
  CHECK(fresh.preset.empty());
}

TEST_CASE("the time-to-loss flags: defaults keep today's run, errors name the flag", "[flags]") {
  const train::TrainOptions& d = train::default_options();
  CHECK(d.schedule.shape == train::LrShape::Cosine);
  CHECK_FALSE(d.zero_init_proj);
  CHECK(train::find_train_flag("lr-schedule")->default_text == "cosine");
  CHECK(train::find_train_flag("lr-decay-frac")->default_text == "0.2");
  CHECK(train::find_train_flag("zero-init-proj")->type == train::FlagType::Switch);
  for (const char* name : {"lr-schedule", "lr-decay-frac", "zero-init-proj", "preset"}) {
    INFO(name);
    CHECK(train::find_train_flag(name)->resume == train::Resume::Refused);
  }
  train::TrainOptions o = d;
  o.schedule.decay_steps = o.max_steps;  // as the command line sets it
  train::find_train_flag("lr-schedule")->set(o, std::string("wsd"));
  CHECK(o.schedule.shape == train::LrShape::Wsd);
  try {
    train::find_train_flag("lr-schedule")->set(o, std::string("linear"));
    FAIL("no error");
  } catch (const tg::UsageError& e) {
    CHECK(std::string(e.what()) == "--lr-schedule must be 'cosine' or 'wsd' (got 'linear')");
  }
  o.schedule.decay_frac = 0.0;
  CHECK(train::options_error(o) == "--lr-decay-frac must be above 0 and at most 1");
  o.schedule.decay_frac = 1.5;
  CHECK(train::options_error(o) == "--lr-decay-frac must be above 0 and at most 1");
  o.schedule.decay_frac = 1.0;
  CHECK(train::options_error(o).empty());
  o.eval_steps = 0;  // the whole validation split
  CHECK(train::options_error(o).empty());
  o.eval_steps = -1;
  CHECK(train::options_error(o).find("--eval-steps") != std::string::npos);
}

TEST_CASE("every recipe names real flags with values they take; flags given win", "[flags]") {
  for (const train::TrainPreset& p : train::train_presets()) {
    INFO(p.name);
    REQUIRE(train::find_train_preset(p.name) == &p);
    for (const auto& [flag, value] : p.flags) {
      INFO(flag);
      const train::TrainFlag* f = train::find_train_flag(flag);
      REQUIRE(f != nullptr);
      REQUIRE(f->set != nullptr);
      train::TrainOptions o = train::default_options();
      CHECK_NOTHROW(train::set_flag_from_text(*f, value, &o));
    }
    train::TrainOptions o = train::default_options();
    train::apply_train_preset(p, [](const std::string&) { return false; }, &o);
    CHECK(o.preset == p.name);
    o.schedule.decay_steps = o.max_steps;
    CHECK(train::options_error(o).empty());
  }
  CHECK(train::find_train_preset("gpt2-small") == nullptr);  // a model shape, not a recipe
  const train::TrainPreset* fast = train::find_train_preset("shakespeare-fast");
  REQUIRE(fast != nullptr);
  train::TrainOptions o = train::default_options();
  o.max_steps = 77;  // as if given on the command line
  train::apply_train_preset(*fast, [](const std::string& flag) { return flag == "max-steps"; }, &o);
  CHECK(o.max_steps == 77);
  CHECK(o.model.n_embd == 128);
  CHECK(o.model.block_size == 64);
  CHECK(o.batch_size == 12);
}

TEST_CASE("flag values from text: types checked, one-line errors", "[flags]") {
  train::TrainOptions o = train::default_options();
  train::set_flag_from_text(*train::find_train_flag("batch-size"), "7", &o);
  CHECK(o.batch_size == 7);
  train::set_flag_from_text(*train::find_train_flag("lr"), "2.5e-3", &o);
  CHECK(o.schedule.lr == 2.5e-3);
  train::set_flag_from_text(*train::find_train_flag("no-bias"), "", &o);
  CHECK_FALSE(o.model.bias);
  train::set_flag_from_text(*train::find_train_flag("mlp"), "relu2", &o);
  CHECK(o.model.mlp == nn::MlpKind::Relu2);
  CHECK_THROWS_AS(train::set_flag_from_text(*train::find_train_flag("batch-size"), "7x", &o), tg::UsageError);
  CHECK_THROWS_AS(train::set_flag_from_text(*train::find_train_flag("lr"), "fast", &o), tg::UsageError);
  CHECK_THROWS_AS(train::set_flag_from_text(*train::find_train_flag("no-bias"), "1", &o), tg::UsageError);
  CHECK_THROWS_AS(train::set_flag_from_text(*train::find_train_flag("mlp"), "tanh", &o), tg::UsageError);
}

TEST_CASE("--optimizer, --adamw-lr and --muon-momentum: defaults, saved slots, errors", "[flags]") {
  // Note [Muon] in train/optimizer.h; a checkpoint from before them resumes as AdamW.
  const std::vector<std::tuple<std::string, std::string, int, std::string>> rows = {
      {"optimizer", "adamw", 19, "optimizer"}, {"adamw-lr", "0.003", 20, "adamw_lr"},
      {"muon-momentum", "0.95", 21, "muon_momentum"}};
  for (const auto& [flag, fallback, slot, saved] : rows) {
    INFO(flag);
    const train::TrainFlag* f = train::find_train_flag(flag);
    REQUIRE(f != nullptr);
    CHECK(f->group == "optimisation");
    CHECK(f->default_text == fallback);
    // --optimizer may restate the run's own on a resume (cmd_train.cpp checks it).
    CHECK(f->resume == (flag == "optimizer" ? train::Resume::Restates : train::Resume::Refused));
    CHECK(f->saved_slot == slot);
    CHECK(f->saved_as == saved);
  }
  train::TrainOptions o = train::default_options();
  CHECK(o.optimizer == train::OptimizerKind::AdamW);
  train::options_from_flags({checkpoints::Flag{"lr", 1e-3}}, &o);  // no optimizer flag saved
  CHECK(o.optimizer == train::OptimizerKind::AdamW);
  train::find_train_flag("optimizer")->set(o, std::string("muon"));
  CHECK(o.optimizer == train::OptimizerKind::Muon);
  o.schedule.decay_steps = o.max_steps;  // as the command line defaults it
  try {
    train::find_train_flag("optimizer")->set(o, std::string("sgd"));
    FAIL("no error");
  } catch (const tg::UsageError& e) {
    CHECK(std::string(e.what()) == "--optimizer must be 'adamw' or 'muon' (got 'sgd')");
  }
  CHECK(o.optimizer == train::OptimizerKind::Muon);
  CHECK(train::options_error(o).empty());
  o.muon.momentum = 1.0f;
  CHECK(train::options_error(o) == "--muon-momentum must be in [0, 1)");
  o.muon.momentum = 0.95f;
  o.muon.adamw_lr = 0.0;
  CHECK(train::options_error(o) == "--adamw-lr must be a positive number");
  o.muon.adamw_lr = 3e-3;
  o.shard_optimizer = true;  // Muon needs whole matrices
  CHECK(train::options_error(o).find("--shard-optimizer cannot run --optimizer muon") == 0);
  o.optimizer = train::OptimizerKind::AdamW;
  CHECK(train::options_error(o).empty());
}

TEST_CASE("a saved flag of the wrong type is a data error; an unknown one is ignored", "[flags]") {
  train::TrainOptions o;
  CHECK_THROWS_AS(train::options_from_flags({checkpoints::Flag{"batch_size", std::string("12")}}, &o),
                  tg::DataError);
  CHECK_THROWS_AS(train::options_from_flags({checkpoints::Flag{"lr", int64_t{1}}}, &o), tg::DataError);
  const train::TrainOptions before = o;
  train::options_from_flags({checkpoints::Flag{"from_a_newer_tapegpt", int64_t{1}}}, &o);
  CHECK(o.batch_size == before.batch_size);
}

TEST_CASE("--precision: default auto, saved resolved in slot 26, read back; bad values refused", "[flags][precision]") {
  const train::TrainFlag* f = train::find_train_flag("precision");
  REQUIRE(f != nullptr);
  CHECK(f->default_text == "auto");
  CHECK(f->resume == train::Resume::Restates);  // changed on resume only with --change-precision (cmd_train.cpp)
  CHECK(f->saved_slot == 26);
  train::TrainOptions o = train::default_options();
  train::set_flag_from_text(*f, "fp32", &o);
  train::resolve_precision(&o);
  CHECK(o.precision == "fp32");
  CHECK(o.precision_reason == "asked for");
  train::set_flag_from_text(*f, "auto", &o);
  train::resolve_precision(&o);  // never saved as "auto"
  CHECK((o.precision == "fp32" || o.precision == "bf16"));
  CHECK(o.precision_reason.rfind("auto: ", 0) == 0);
  if (!kernels::bf16_native()) CHECK(o.precision == "fp32");  // never bf16 where it would be emulated
  train::TrainOptions back = train::default_options();
  train::options_from_flags(train::options_to_flags(o), &back);
  CHECK(back.precision == o.precision);
  train::set_flag_from_text(*f, "fp16", &o);
  CHECK_THROWS_AS(train::resolve_precision(&o), tg::UsageError);
  CHECK(train::precision_of_saved("bf16") == train::Precision::Bf16);
  CHECK(train::precision_of_saved("fp32") == train::Precision::Fp32);
  CHECK(train::precision_of_saved("") == train::Precision::Fp32);  // a file from before precisions
  CHECK_THROWS_AS(train::precision_of_saved("auto"), tg::DataError);
  // bf16 asked for where oneDNN has one runs, and says so.
  if (kernels::bf16_matmul_available()) {
    train::set_flag_from_text(*f, "bf16", &o);
    train::resolve_precision(&o);
    CHECK(o.precision == "bf16");
    if (!kernels::bf16_native()) CHECK(o.precision_reason.find(", emulated: oneDNN runs") != std::string::npos);
  }
}

TEST_CASE("auto's rule: bf16 only where native and measured faster; the reason says which", "[flags][precision]") {
  // Note [auto precision], on given facts (the hardware here shows one case).
  const train::AutoShape shape{1024, 384};
  const train::Bf16Backend none{false, false, "none"}, avx2{false, false, "avx2"},
      emulated{true, false, "avx512_core"}, zen4{true, true, "avx512_core_bf16"}, amx{true, true, "avx512_core_amx"};
  for (const auto& b : {none, avx2, emulated}) {
    const train::PrecisionChoice c = train::decide_auto(b, 0, &shape);
    CHECK(c.precision == train::Precision::Fp32);
    CHECK(c.reason.rfind("auto: float32, since ", 0) == 0);
    CHECK(c.measured_speedup == 0);
  }
  CHECK(train::decide_auto(none, 0, &shape).reason.find("no oneDNN") != std::string::npos);
  CHECK(train::decide_auto(emulated, 0, &shape).reason.find("would emulate bf16") != std::string::npos);
  const train::PrecisionChoice fast = train::decide_auto(zen4, 1.87, &shape);
  CHECK(fast.precision == train::Precision::Bf16);
  CHECK(fast.measured_speedup == 1.87);
  CHECK(fast.reason == "auto: bf16, since oneDNN runs avx512_core_bf16 (native bf16) and measured 1.87x float32's "
                       "matmul speed at this model's width (C 384)");
  CHECK(train::decide_auto(amx, train::kAutoMinSpeedup, &shape).precision == train::Precision::Bf16);
  const train::PrecisionChoice slow = train::decide_auto(zen4, 1.05, &shape);
  CHECK(slow.precision == train::Precision::Fp32);  // native, but not faster enough: float32
  CHECK(slow.reason.rfind("auto: float32, since oneDNN runs avx512_core_bf16 (native bf16) but measured 1.05x", 0) == 0);
  // Not measured (mpirun ranks): the ISA alone, and the reason says why.
  const train::PrecisionChoice unmeasured = train::decide_auto(zen4, 0, &shape);
  CHECK(unmeasured.precision == train::Precision::Bf16);
  CHECK(unmeasured.reason.find("not measured: ranks of an mpirun job") != std::string::npos);
  const train::PrecisionChoice sanitized = train::decide_auto(zen4, 0, &shape, "a sanitizer build's speeds");
  CHECK(sanitized.precision == train::Precision::Bf16);
  CHECK(sanitized.reason.find("not measured: a sanitizer build's speeds") != std::string::npos);
}

TEST_CASE("a checkpoint's command follows its trained precision under auto", "[flags][precision]") {
  const train::PrecisionChoice f = train::precision_for_checkpoint("auto", train::Precision::Fp32);
  CHECK(f.precision == train::Precision::Fp32);
  CHECK(f.reason == "auto: the checkpoint's own (trained in float32)");
  const train::PrecisionChoice b = train::precision_for_checkpoint("auto", train::Precision::Bf16);
  CHECK(b.precision == (kernels::bf16_matmul_available() ? train::Precision::Bf16 : train::Precision::Fp32));
  CHECK(train::precision_for_checkpoint("fp32", train::Precision::Bf16).precision == train::Precision::Fp32);
  CHECK_THROWS_AS(train::precision_for_checkpoint("half", train::Precision::Fp32), tg::UsageError);
}

TEST_CASE("a resumed run may change only these flags", "[flags]") {
  std::set<std::string> resumable;
  for (const train::TrainFlag& f : train::train_flags())
    if (f.resume == train::Resume::Changes) resumable.insert(f.name);
  CHECK(resumable == std::set<std::string>{"resume", "max-steps", "out", "lr", "eval-interval", "eval-steps",
                                           "ckpt-interval", "keep", "overwrite", "allow-data-change", "no-overlap",
                                           "shard-optimizer", "stall-timeout", "change-precision"});
  std::set<std::string> restated;
  for (const train::TrainFlag& f : train::train_flags())
    if (f.resume == train::Resume::Restates) restated.insert(f.name);
  CHECK(restated == std::set<std::string>{"optimizer", "precision"});
  REQUIRE(train::find_train_flag("batch-size") != nullptr);
  CHECK(train::find_train_flag("batch-size")->saved_as == "batch_size");
  CHECK(train::find_train_flag("") == nullptr);  // eps is saved but has no flag
  CHECK(train::find_train_flag("no-such-flag") == nullptr);
}

TEST_CASE("the model choices are flags with today's defaults and one-line errors", "[flags]") {
  // Note [Model choices]: one row each in nn::model_choices(), one flag each here.
  for (const auto& [flag, fallback] : std::vector<std::pair<std::string, std::string>>{
           {"norm", "layernorm"}, {"pos-encoding", "learned"}, {"mlp", "gelu"}, {"gelu", "tanh"}}) {
    INFO(flag);
    const train::TrainFlag* f = train::find_train_flag(flag);
    REQUIRE(f != nullptr);
    CHECK(f->group == "model");
    CHECK(f->default_text == fallback);
    CHECK(f->resume == train::Resume::Refused);
    CHECK(f->saved_slot == -1);  // saved in /config, not /train/flags
  }
  train::TrainOptions o = train::default_options();
  train::find_train_flag("norm")->set(o, std::string("rmsnorm"));
  train::find_train_flag("pos-encoding")->set(o, std::string("rope"));
  train::find_train_flag("mlp")->set(o, std::string("swiglu"));
  CHECK(o.model.norm == nn::NormKind::RMSNorm);
  CHECK(o.model.pos_encoding == nn::PosEncoding::Rope);
  CHECK(o.model.mlp == nn::MlpKind::Swiglu);
  train::find_train_flag("mlp")->set(o, std::string("relu2"));
  CHECK(o.model.mlp == nn::MlpKind::Relu2);
  // A switch choice: a bare flag, off unless given, recorded in /config.
  const train::TrainFlag* qk = train::find_train_flag("qk-norm");
  REQUIRE(qk != nullptr);
  CHECK(qk->type == train::FlagType::Switch);
  CHECK(qk->group == "model");
  CHECK(qk->saved_slot == -1);
  CHECK_FALSE(o.model.qk_norm);
  qk->set(o, int64_t{1});
  CHECK(o.model.qk_norm);
  qk->set(o, int64_t{0});
  CHECK_FALSE(o.model.qk_norm);
  // A choice of numbers: the cap, or off.
  const train::TrainFlag* cap = train::find_train_flag("logit-softcap");
  REQUIRE(cap != nullptr);
  CHECK(cap->group == "model");
  CHECK(cap->default_text == "off");
  CHECK(cap->saved_slot == -1);
  CHECK(o.model.logit_softcap == 0.0f);
  cap->set(o, std::string("20"));
  CHECK(o.model.logit_softcap == 20.0f);
  cap->set(o, std::string("off"));
  CHECK(o.model.logit_softcap == 0.0f);
  const std::vector<std::pair<std::string, std::string>> errors = {
      {"norm", "--norm must be 'layernorm' or 'rmsnorm' (got 'batchnorm')"},
      {"pos-encoding", "--pos-encoding must be 'learned', 'sinusoidal' or 'rope' (got 'batchnorm')"},
      {"mlp", "--mlp must be 'gelu', 'relu2' or 'swiglu' (got 'batchnorm')"},
      {"gelu", "--gelu must be 'tanh' or 'erf' (got 'batchnorm')"},
      {"logit-softcap", "--logit-softcap must be 'off', '15', '20' or '30' (got 'batchnorm')"}};
  for (const auto& [flag, message] : errors) {
    INFO(flag);
    try {
      train::find_train_flag(flag)->set(o, std::string("batchnorm"));
      FAIL("no error");
    } catch (const tg::UsageError& e) {
      CHECK(std::string(e.what()) == message);
    }
  }
  // Defaults untouched by the failures above.
  CHECK(o.model.norm == nn::NormKind::RMSNorm);
  CHECK(train::default_options().model.norm == nn::NormKind::LayerNorm);
  CHECK(train::default_options().model.mlp == nn::MlpKind::Gelu);
}

TEST_CASE("derived defaults: min-lr, decay steps and warmup follow the flags they derive from", "[flags]") {
  // Note [Derived defaults]: one rule for the command line and the --budget planner.
  train::TrainOptions o = train::default_options();
  o.schedule.lr = 0.02;
  o.max_steps = 30;
  const auto none = [](const std::string&) { return false; };
  train::apply_derived_defaults(none, &o);
  CHECK(o.schedule.min_lr == Approx(0.002));
  CHECK(o.schedule.decay_steps == 30);
  CHECK(o.schedule.warmup == 30);  // the default warmup of 50 yields to a 30-step run
  // Given flags stay as given; only both warmup and decay given can contradict.
  train::TrainOptions g = train::default_options();
  g.schedule.min_lr = 0.5;
  g.schedule.decay_steps = 100;
  g.schedule.warmup = 10;
  const auto some = [](const std::string& f) { return f == "min-lr" || f == "lr-decay-steps"; };
  train::apply_derived_defaults(some, &g);
  CHECK(g.schedule.min_lr == 0.5);
  CHECK(g.schedule.decay_steps == 100);
  g.schedule.warmup = 200;
  const auto both = [](const std::string& f) { return f == "warmup" || f == "lr-decay-steps"; };
  CHECK_THROWS_AS(train::apply_derived_defaults(both, &g), tg::UsageError);
}
