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
