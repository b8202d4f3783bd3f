// --budget: the duration parser, the planner's choices on a simulated
// machine (Note [Budget plan]) and the loop's guard (Note [Budget guard]).
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>

#include "autograd/base/errors.h"
#include "nn/params.h"
#include "train/budget/duration.h"
#include "train/budget/guard.h"
#include "train/budget/plan.h"
#include "train/train_flags.h"

using train::BudgetGuard;
using train::BudgetPlan;
using train::TrainOptions;

TEST_CASE("durations: NUMBER UNIT pairs, anything else refused", "[budget]") {
  CHECK(train::parse_duration_seconds("90s", "budget") == 90);
  CHECK(train::parse_duration_seconds("5m", "budget") == 300);
  CHECK(train::parse_duration_seconds("2h", "budget") == 7200);
  CHECK(train::parse_duration_seconds("1h30m", "budget") == 5400);
  CHECK(train::parse_duration_seconds("1.5h", "budget") == 5400);
  CHECK(train::parse_duration_seconds("0.5m", "budget") == 30);
  for (const char* bad : {"", "5", "5x", "m", "0s", "-5m", "5 m", "5m3", "1e400s"}) {
    INFO(bad);
    CHECK_THROWS_AS(train::parse_duration_seconds(bad, "budget"), tg::UsageError);
  }
  try {
    train::parse_duration_seconds("5", "budget");
  } catch (const tg::UsageError& e) {
    CHECK(std::string(e.what()).find("--budget '5'") != std::string::npos);
    CHECK(std::string(e.what()).find("90s, 5m") != std::string::npos);
  }
}

namespace {

// A simulated machine: a step costs its FLOPs at a fixed rate, each
// measurement takes 3 steps of the clock, and the planner's clock starts
// at 1 s (the command's start-up).
struct FakeMachine {
  double flops_per_s = 5e10;
  double now_s = 1.0;
  std::set<std::pair<int64_t, int64_t>> measured;  // (layers, width)
  double step_seconds(const TrainOptions& o) {
    const double s = nn::training_flops_per_token(o.model) * static_cast<double>(train::tokens_per_step(o)) /
                     flops_per_s;
    now_s += 4 * s;
    measured.insert({o.model.n_layer, o.model.n_embd});
    return s;
  }
  train::PlanClock clock() {
    return {[this](const TrainOptions& o) { return step_seconds(o); }, [this] { return now_s; }};
  }
};

const auto nothing_given = [](const std::string&) { return false; };

TrainOptions base_options() {
  TrainOptions o = train::default_options();
  o.model.vocab_size = 65;
  return o;
}

train::CorpusFacts corpus(int64_t train_tokens) { return {train_tokens, train_tokens / 9}; }

double block_weights(const nn::GPTConfig& c) { return 12.0 * c.n_layer * c.n_embd * c.n_embd; }

}  // namespace

TEST_CASE("the plan fills the budget with the largest rung that sees enough tokens per weight", "[budget]") {
  int64_t last_rung = 0;
  for (double budget : {60.0, 300.0, 1800.0, 7200.0}) {
    FakeMachine m;
    const BudgetPlan p = train::plan_budget(base_options(), nothing_given, corpus(1000000), {budget, train::BudgetFit::All}, m.clock());
    const TrainOptions& o = p.options;
    // The chosen shape is a rung of the ladder, with heads of 64.
    int64_t rung = -1;
    for (int64_t r = 0; r < train::ladder_rungs(); ++r) {
      const nn::GPTConfig c = train::ladder_rung(r, o.model);
      if (c.n_layer == o.model.n_layer && c.n_embd == o.model.n_embd) rung = r;
    }
    INFO("budget " << budget << " rung " << rung);
    REQUIRE(rung >= 0);
    CHECK(o.model.head_size() == 64);
    CHECK(o.model.block_size == train::ladder_context(rung));
    CHECK(o.batch_size == train::ladder_batch(rung));
    // Muon's rate follows the chosen width, and decays to a tenth.
    CHECK(o.optimizer == train::OptimizerKind::Muon);
    CHECK(o.schedule.lr == Approx(train::budget_muon_lr(o.model.n_embd)));
    CHECK(o.schedule.min_lr == Approx(o.schedule.lr / 10));
    // More time never buys a smaller model.
    CHECK(rung >= last_rung);
    last_rung = rung;
    // Its tokens per weight reach the balance (the first rung is the floor) ...
    const double tokens = static_cast<double>(o.max_steps * train::tokens_per_step(o));
    if (rung > 0) CHECK(tokens >= 0.9 * train::kTokensPerParameter * block_weights(o.model));
    // ... the next rung's would not, and rungs beyond it were never measured.
    if (rung + 1 < train::ladder_rungs()) {
      TrainOptions bigger = o;
      bigger.model = train::ladder_rung(rung + 1, o.model);
      bigger.model.block_size = train::ladder_context(rung + 1);
      bigger.batch_size = train::ladder_batch(rung + 1);
      const double next_tokens =
          budget / m.step_seconds(bigger) * static_cast<double>(train::tokens_per_step(bigger));
      CHECK(next_tokens < train::kTokensPerParameter * block_weights(bigger.model));
    }
    for (int64_t r = rung + 2; r < train::ladder_rungs(); ++r) {
      const nn::GPTConfig c = train::ladder_rung(r, o.model);
      CHECK(m.measured.count({c.n_layer, c.n_embd}) == 0);
    }
    // The steps fit the budget with the planning time, and end the schedule.
    CHECK(m.now_s + static_cast<double>(o.max_steps) * p.step_seconds <= budget * 0.97);
    CHECK(static_cast<double>(o.max_steps) * p.step_seconds >= budget * 0.8);
    CHECK(o.schedule.decay_steps == o.max_steps);
    CHECK(o.schedule.warmup <= o.max_steps);
    CHECK(o.eval_interval >= 1);
    CHECK(p.deadline_s < p.hard_deadline_s);
    CHECK(p.hard_deadline_s < budget);
    CHECK(train::options_error(o).empty());
    // Every move says what it chose.
    std::string all;
    for (const auto& line : p.choices) all += line + "\n";
    for (const char* part : {"model: ", "steps: ", "dropout: ", "recipe: --optimizer muon", "evaluations: "})
      CHECK(all.find(part) != std::string::npos);
  }
}

TEST_CASE("a corpus read many times gets dropout; a large one none", "[budget]") {
  FakeMachine small, large;
  const BudgetPlan a = train::plan_budget(base_options(), nothing_given, corpus(20000), {600, train::BudgetFit::All}, small.clock());
  const BudgetPlan b =
      train::plan_budget(base_options(), nothing_given, corpus(1000000000), {600, train::BudgetFit::All}, large.clock());
  CHECK(a.options.model.dropout > 0.0f);
  CHECK(b.options.model.dropout == 0.0f);
  // A context no longer than a tiny corpus allows.
  CHECK(a.options.model.block_size <= 20000 / 64);
  CHECK(b.options.model.block_size >= 128);
}

TEST_CASE("flags the user gives win over the plan's choices", "[budget]") {
  TrainOptions o = base_options();
  o.model.n_layer = 3;
  o.model.n_embd = 96;
  o.model.n_head = 3;
  o.optimizer = train::OptimizerKind::AdamW;
  o.model.dropout = 0.05f;
  o.max_steps = 123;
  o.batch_size = 5;
  const std::set<std::string> flags = {"n-layer", "n-embd", "n-head", "optimizer", "dropout", "max-steps",
                                       "batch-size"};
  const auto given = [&](const std::string& f) { return flags.count(f) > 0; };
  FakeMachine m;
  const BudgetPlan p = train::plan_budget(o, given, corpus(1000000), {300, train::BudgetFit::All}, m.clock());
  CHECK(p.options.model.n_layer == 3);
  CHECK(p.options.model.n_embd == 96);
  CHECK(p.options.optimizer == train::OptimizerKind::AdamW);
  CHECK(p.options.model.dropout == 0.05f);
  CHECK(p.options.max_steps == 123);
  CHECK(p.options.batch_size == 5);
  CHECK(p.options.schedule.decay_steps == 123);
  CHECK(m.measured.size() == 1);  // one measurement: the user's shape
  CHECK(m.measured.count({3, 96}) == 1);
  // What was not given still follows the recipe.
  CHECK(p.options.model.pos_encoding == nn::PosEncoding::Rope);
}

TEST_CASE("Muon's rate under --budget grows as the square root of the width; --lr wins", "[budget]") {
  CHECK(train::budget_muon_lr(512) == Approx(train::kDefaultMuonLr));
  CHECK(train::budget_muon_lr(128) == Approx(train::kDefaultMuonLr / 2));
  CHECK(train::budget_muon_lr(768) == Approx(train::kDefaultMuonLr * std::sqrt(1.5)));
  TrainOptions o = base_options();
  o.schedule.lr = 0.03;
  o.schedule.min_lr = 0.003;  // as the command line derives it from --lr
  const auto given = [](const std::string& f) { return f == "lr"; };
  FakeMachine m;
  const BudgetPlan p = train::plan_budget(o, given, corpus(1000000), {300, train::BudgetFit::All}, m.clock());
  CHECK(p.options.optimizer == train::OptimizerKind::Muon);
  CHECK(p.options.schedule.lr == Approx(0.03));
  CHECK(p.options.schedule.min_lr == Approx(0.003));
}

TEST_CASE("--budget-fit steps keeps the model and optimizer, fits the steps", "[budget]") {
  const TrainOptions o = base_options();
  FakeMachine m;
  const BudgetPlan p = train::plan_budget(o, nothing_given, corpus(1000000), {300, train::BudgetFit::Steps}, m.clock());
  CHECK(p.options.model.n_layer == o.model.n_layer);
  CHECK(p.options.model.n_embd == o.model.n_embd);
  CHECK(p.options.model.block_size == o.model.block_size);
  CHECK(p.options.model.pos_encoding == o.model.pos_encoding);
  CHECK(p.options.model.dropout == o.model.dropout);
  CHECK(p.options.batch_size == o.batch_size);
  CHECK(p.options.optimizer == o.optimizer);
  CHECK(p.options.schedule.lr == o.schedule.lr);
  CHECK(p.options.schedule.shape == o.schedule.shape);
  CHECK(p.options.max_steps != o.max_steps);
  CHECK(p.options.schedule.decay_steps == p.options.max_steps);
  CHECK(m.now_s + static_cast<double>(p.options.max_steps) * p.step_seconds <= 300 * 0.97);
}

TEST_CASE("under mpirun the plan is the whole job's: one micro-batch a rank, the job's tokens", "[budget]") {
  FakeMachine one, two;
  const BudgetPlan a =
      train::plan_budget(base_options(), nothing_given, corpus(100000000), {1800, train::BudgetFit::All}, one.clock());
  // Two ranks step together at the same time a step (the machine doubled).
  const BudgetPlan b = train::plan_budget(base_options(), nothing_given, corpus(100000000),
                                          {1800, train::BudgetFit::All, 2}, two.clock());
  CHECK(a.options.grad_accum == 1);
  CHECK(b.options.grad_accum == 2);
  CHECK((b.options.batch_size == train::ladder_batch(0) || b.options.batch_size == train::ladder_batch(4)));
  // The fake machine charges a step by its FLOPs: twice the batch, twice the
  // time, so the job's tokens are the same and so is the rung; a machine
  // twice as fast (two ranks, each a core) buys a larger one.
  FakeMachine fast;
  fast.flops_per_s *= 2;
  const BudgetPlan c = train::plan_budget(base_options(), nothing_given, corpus(100000000),
                                          {1800, train::BudgetFit::All, 2}, fast.clock());
  CHECK(c.options.grad_accum == 2);
  CHECK(block_weights(c.options.model) >= block_weights(a.options.model));
  const int64_t job_tokens = c.options.max_steps * train::tokens_per_step(c.options);
  CHECK(job_tokens > a.options.max_steps * train::tokens_per_step(a.options));
  std::string all;
  for (const auto& line : c.choices) all += line + "\n";
  CHECK(all.find("processes: 2 (mpirun), each 1 micro-batch a step") != std::string::npos);
  // A --grad-accum given must already be the job's.
  const auto accum_given = [](const std::string& f) { return f == "grad-accum"; };
  TrainOptions o = base_options();
  o.grad_accum = 4;
  FakeMachine m;
  CHECK(train::plan_budget(o, accum_given, corpus(1000000), {300, train::BudgetFit::All, 2}, m.clock())
            .options.grad_accum == 4);
}

TEST_CASE("fine-tuning keeps the checkpoint's shape and architecture, at a gentler rate", "[budget]") {
  TrainOptions o = base_options();  // as --init-from leaves it: the checkpoint's shape
  o.model.n_layer = 3;
  o.model.n_embd = 192;
  o.model.n_head = 3;
  o.model.block_size = 256;
  o.model.pos_encoding = nn::PosEncoding::Learned;
  o.model.bias = true;
  FakeMachine m;
  const BudgetPlan p =
      train::plan_budget(o, nothing_given, corpus(1000000), {300, train::BudgetFit::FineTune}, m.clock());
  const TrainOptions& f = p.options;
  CHECK(f.model.n_layer == 3);
  CHECK(f.model.n_embd == 192);
  CHECK(f.model.block_size == 256);
  CHECK(f.model.pos_encoding == nn::PosEncoding::Learned);
  CHECK(f.model.bias);
  CHECK(m.measured.size() == 1);
  // Half the tokens of a step of the ladder's rung nearest in size (4 x 192).
  CHECK(f.batch_size == 6);
  CHECK(f.optimizer == train::OptimizerKind::Muon);
  CHECK(f.schedule.lr == Approx(train::budget_muon_lr(192) * train::kFineTuneLrShare));
  CHECK(f.schedule.min_lr == Approx(f.schedule.lr / 10));
  CHECK(f.schedule.decay_steps == f.max_steps);
  CHECK(m.now_s + static_cast<double>(f.max_steps) * p.step_seconds <= 300 * 0.97);
  std::string all;
  for (const auto& line : p.choices) all += line + "\n";
  CHECK(all.find("(the checkpoint's)") != std::string::npos);
  CHECK(all.find("fine-tuning keeps its architecture") != std::string::npos);
  CHECK(all.find("fine-tuning takes") != std::string::npos);
}

namespace {

train::LrSchedule wsd(int64_t steps) {
  train::LrSchedule s{0.02, 0.002, 10, steps};
  s.shape = train::LrShape::Wsd;
  s.decay_frac = 0.3;
  return s;
}

// Steps a guard through a run at `step_s` seconds a step from t = 10 s,
// planned to end at `max_steps`; returns the count it ends at and when.
std::pair<int64_t, double> run_guarded(BudgetGuard& g, int64_t max_steps, double step_s, bool cosine = false) {
  double now = 10.0;
  std::string why;
  for (int64_t step = 1; step <= max_steps; ++step) {
    now += step_s;
    train::LrSchedule s = wsd(max_steps);
    if (cosine) s.shape = train::LrShape::Cosine;
    const int64_t end = g.revise(step, max_steps, s, now, &why);
    if (end != max_steps) CHECK(!why.empty());
    if (end < max_steps && cosine == false && step + 1 < train::wsd_decay_start(s))
      CHECK(train::wsd_decay_start(wsd(end)) > step);  // the decay never starts in the past
    max_steps = end;
  }
  return {max_steps, now};
}

}  // namespace

TEST_CASE("the guard leaves a run on time alone", "[budget]") {
  BudgetGuard g(10.0 + 1000 * 0.1, 10.0 + 1000 * 0.1 + 5);
  const auto [end, t] = run_guarded(g, 1000, 0.1);
  CHECK(end == 1000);
}

TEST_CASE("the guard shortens a run on a slower machine and ends it by the deadline", "[budget]") {
  BudgetGuard g(110.0, 115.0);  // planned: 1000 steps of 0.1 s from t = 10
  const auto [end, t] = run_guarded(g, 1000, 0.2);
  CHECK(end < 560);
  CHECK(end > 440);
  CHECK(t <= 115.0);
}

TEST_CASE("the guard lengthens a run on a faster machine while the rate is held", "[budget]") {
  BudgetGuard g(110.0, 115.0);
  const auto [end, t] = run_guarded(g, 1000, 0.05);
  CHECK(end > 1800);
  CHECK(t <= 115.0);
  CHECK(t >= 100.0);
}

TEST_CASE("a machine slowing down step by step gets a few revisions, not one a step", "[budget]") {
  BudgetGuard g(110.0, 113.0);  // planned: 1000 steps of 0.1 s from t = 10
  double now = 10.0;
  std::string why;
  int64_t max_steps = 1000, revisions = 0;
  for (int64_t step = 1; step <= max_steps; ++step) {
    now += 0.1 * (1.0 + static_cast<double>(step) / 1000.0);  // 0.1 s a step, then up to 0.2
    const int64_t end = g.revise(step, max_steps, wsd(max_steps), now, &why);
    revisions += end != max_steps;
    max_steps = end;
  }
  CHECK(revisions <= 30);  // each moves the end by more than kReviseShare
  CHECK(now <= 113.0);
  CHECK(max_steps > 600);
}

TEST_CASE("a run slowing down in its decay is cut a few times, not at every step", "[budget]") {
  // On time until the decay (step 700 of 1000), then each step 0.1% slower
  // than the last: the held-out bench run's shape (3,715 steps, cut 40 times).
  BudgetGuard g(110.0, 113.0);
  double now = 10.0, step_s = 0.1;
  std::string why;
  int64_t max_steps = 1000, cuts = 0;
  for (int64_t step = 1; step <= max_steps; ++step) {
    if (step > 700) step_s *= 1.001;
    now += step_s;
    const int64_t end = g.revise(step, max_steps, wsd(1000), now, &why);
    cuts += end != max_steps;
    max_steps = end;
  }
  CHECK(cuts <= 6);
  CHECK(now <= 113.0);
}

TEST_CASE("in the decay only the hard deadline moves the end", "[budget]") {
  // A machine that slows down at step 900, in the decay of a 1000-step WSD
  // run: 0.1 s a step before, 1 s after.
  BudgetGuard g(110.0, 115.0);
  double now = 10.0;
  std::string why;
  int64_t max_steps = 1000;
  for (int64_t step = 1; step <= max_steps; ++step) {
    now += step <= 900 ? 0.1 : 1.0;
    max_steps = g.revise(step, max_steps, wsd(1000), now, &why);
  }
  CHECK(max_steps < 1000);
  CHECK(now <= 115.0 + 1.0);  // the step that crossed is the last
}
