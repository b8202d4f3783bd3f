// Whole-model finite-difference check: every parameter tensor of a tiny GPT
// (learned and sinusoidal positions, tied and untied head, with and without
// bias, with dropout) against central differences of the mean loss.
//
// Tolerance: the model runs in float32, so the loss carries a rounding error
// of ~1e-6 and a central difference with h = 1e-2 is off by ~1e-4 in absolute
// terms. Each tensor's errors are therefore measured relative to that
// tensor's largest gradient (floor = 5% of it), and must stay below 2%;
// a missing or wrong term shows up as errors of order 1. The double-precision
// checks of each kernel are in tests/autograd, and tests against PyTorch in
// scripts/torch_parity.py.
#include <catch2/catch.hpp>

#include "model_fixture.h"
#include "support/gradcheck.h"

namespace {

void check_model(const nn::GPTConfig& c, const char* label) {
  nn::GPT m = testing::tiny_model(c);
  const testing::Batch batch = testing::tiny_batch(2, c.block_size - 1, c.vocab_size);
  autograd::Arena arena;
  autograd::Tape tape;
  autograd::Tensor loss;
  testing::model_loss(m, batch, arena, &tape, &loss);
  tape.backward(loss);

  tg::Rng rng(5);
  testing::GradcheckStats stats;
  for (const nn::ParamInfo& p : m.store.table) {
    std::vector<float> x(m.store.values.floats() + p.offset, m.store.values.floats() + p.offset + p.numel);
    std::vector<float> g(m.store.grads.data() + p.offset, m.store.grads.data() + p.offset + p.numel);
    float gmax = 0.0f;
    for (float v : g) gmax = std::max(gmax, std::fabs(v));
    INFO(label << ": " << p.name << " max |grad| " << gmax);
    REQUIRE(gmax > 0.0f);
    auto loss_fn = [&] {
      std::copy(x.begin(), x.end(), m.store.values.floats() + p.offset);
      autograd::Arena a;
      autograd::Tape scratch;  // keeps dropout on (same seed, same mask)
      return testing::model_loss(m, batch, a, c.dropout > 0 ? &scratch : nullptr);
    };
    const double worst = testing::gradcheck(x, g, loss_fn, 1e-2, 0.05 * gmax, 12, rng, &stats);
    std::copy(x.begin(), x.end(), m.store.values.floats() + p.offset);
    CHECK(worst < 2e-2);
  }
  std::printf("gradcheck(whole model %s, float32): worst error %.3g over %lld checks\n", label,
              stats.worst, static_cast<long long>(stats.checks));
}

}  // namespace

TEST_CASE("whole-model gradients match finite differences", "[gradcheck][model]") {
  nn::GPTConfig c = testing::tiny_config();
  check_model(c, "tied, learned positions");
  c.tied = false;
  check_model(c, "untied");
  c.tied = true;
  c.bias = false;
  check_model(c, "no bias");
  c.bias = true;
  c.pos_encoding = nn::PosEncoding::Sinusoidal;
  check_model(c, "sinusoidal positions");
  c.pos_encoding = nn::PosEncoding::Learned;
  c.dropout = 0.1f;
  check_model(c, "dropout 0.1");
}
