// The learning-rate schedule's formula at its edges.
#include <catch2/catch.hpp>

#include <cmath>

#include "train/lr_schedule.h"

TEST_CASE("warmup, cosine decay, then min_lr", "[lr]") {
  train::LrSchedule s{1e-3, 1e-4, 10, 110};
  CHECK(train::lr_at(s, 0) == Approx(1e-4));        // lr·1/10
  CHECK(train::lr_at(s, 9) == Approx(1e-3));        // lr·10/10
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
