// The learning-rate schedule's formula at its edges.
#include <catch2/catch.hpp>

#include <cmath>

#include "train/lr_schedule.h"

// nanoGPT's train.py, written out independently (it = step):
//   if it < warmup_iters: return learning_rate * (it + 1) / (warmup_iters + 1)
//   if it > lr_decay_iters: return min_lr
//   decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
//   coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
//   return min_lr + coeff * (learning_rate - min_lr)
double nanogpt_get_lr(int64_t it, double lr, double min_lr, int64_t warmup, int64_t decay) {
  if (it < warmup) return lr * static_cast<double>(it + 1) / static_cast<double>(warmup + 1);
  if (it > decay) return min_lr;
  const double ratio = static_cast<double>(it - warmup) / static_cast<double>(decay - warmup);
  return min_lr + 0.5 * (1.0 + std::cos(M_PI * ratio)) * (lr - min_lr);
}

TEST_CASE("the schedule is nanoGPT's get_lr at every step", "[lr]") {
  for (int64_t warmup : {0, 1, 10, 100}) {
    train::LrSchedule s{6e-4, 6e-5, warmup, 600};
    for (int64_t it = 0; it < 700; ++it) {
      INFO("warmup " << warmup << " step " << it);
      CHECK(train::lr_at(s, it) == Approx(nanogpt_get_lr(it, 6e-4, 6e-5, warmup, 600)).epsilon(1e-12));
    }
  }
}

TEST_CASE("warmup, cosine decay, then min_lr", "[lr]") {
  train::LrSchedule s{1e-3, 1e-4, 10, 110};
  CHECK(train::lr_at(s, 0) == Approx(1e-3 / 11));    // lr·1/(10+1)
  CHECK(train::lr_at(s, 9) == Approx(1e-3 * 10 / 11)); // lr·10/11: the peak comes at step 10
  CHECK(train::lr_at(s, 10) == Approx(1e-3));       // cosine starts at lr
  CHECK(train::lr_at(s, 60) == Approx(5.5e-4));     // halfway: (lr + min)/2
  CHECK(train::lr_at(s, 110) == Approx(1e-4));
  CHECK(train::lr_at(s, 5000) == Approx(1e-4));
  for (int64_t t = 11; t < 110; ++t) CHECK(train::lr_at(s, t) < train::lr_at(s, t - 1));
}

TEST_CASE("constant when min_lr equals lr", "[lr]") {
  train::LrSchedule s{3e-4, 3e-4, 0, 100};
  for (int64_t t : {0, 50, 99, 100, 1000}) CHECK(train::lr_at(s, t) == 3e-4);
}

TEST_CASE("cosine is the default shape", "[lr]") {
  CHECK(train::LrSchedule{}.shape == train::LrShape::Cosine);
  // A decay_frac set on a cosine schedule changes nothing.
  train::LrSchedule a{1e-3, 1e-4, 10, 110}, b = a;
  b.decay_frac = 0.5;
  for (int64_t t = 0; t < 200; ++t) CHECK(train::lr_at(a, t) == train::lr_at(b, t));
}

TEST_CASE("wsd: warmup, constant, then a straight line to min_lr over the last decay_frac", "[lr]") {
  train::LrSchedule s{1e-3, 1e-4, 10, 1000, train::LrShape::Wsd, 0.2};
  CHECK(train::wsd_decay_start(s) == 800);
  CHECK(train::lr_at(s, 0) == Approx(1e-3 / 11));  // the warmup is cosine's
  CHECK(train::lr_at(s, 9) == Approx(1e-3 * 10 / 11));
  for (int64_t t : {10, 11, 400, 799, 800}) CHECK(train::lr_at(s, t) == 1e-3);
  CHECK(train::lr_at(s, 900) == Approx(5.5e-4));   // halfway down the line: (lr + min)/2
  CHECK(train::lr_at(s, 999) == Approx(1e-4 + 9e-4 / 200));
  CHECK(train::lr_at(s, 1000) == 1e-4);
  CHECK(train::lr_at(s, 5000) == 1e-4);
  for (int64_t t = 801; t < 1000; ++t) {
    INFO("step " << t);
    // Equal steps down: the line's slope is (lr - min_lr)/200 per step.
    CHECK(train::lr_at(s, t - 1) - train::lr_at(s, t) == Approx(9e-4 / 200).epsilon(1e-9));
  }
}

TEST_CASE("wsd: the decay never starts inside the warmup; a whole-run decay is a line after it", "[lr]") {
  train::LrSchedule s{2e-3, 2e-4, 100, 200, train::LrShape::Wsd, 0.9};
  CHECK(train::wsd_decay_start(s) == 100);  // 200 - 180 = 20 is inside the warmup
  CHECK(train::lr_at(s, 99) == Approx(2e-3 * 100 / 101));
  CHECK(train::lr_at(s, 100) == Approx(2e-3));
  CHECK(train::lr_at(s, 150) == Approx(1.1e-3));
  s.decay_frac = 1.0;
  s.warmup = 0;
  CHECK(train::wsd_decay_start(s) == 0);
  CHECK(train::lr_at(s, 0) == Approx(2e-3));
  CHECK(train::lr_at(s, 100) == Approx(1.1e-3));
}

TEST_CASE("wsd: constant when min_lr equals lr", "[lr]") {
  train::LrSchedule s{3e-4, 3e-4, 0, 100, train::LrShape::Wsd, 0.2};
  for (int64_t t : {0, 50, 85, 99, 100, 1000}) CHECK(train::lr_at(s, t) == 3e-4);
}

TEST_CASE("schedule shapes by name", "[lr]") {
  train::LrShape shape = train::LrShape::Cosine;
  CHECK(train::lr_shape_parse("wsd", &shape));
  CHECK(shape == train::LrShape::Wsd);
  CHECK(std::string(train::lr_shape_name(shape)) == "wsd");
  CHECK(train::lr_shape_parse("cosine", &shape));
  CHECK(shape == train::LrShape::Cosine);
  CHECK_FALSE(train::lr_shape_parse("linear", &shape));
  CHECK(shape == train::LrShape::Cosine);
}
