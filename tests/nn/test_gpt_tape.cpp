// The recorded graph of one training step: one block's ops in order (the
// backward runs them in reverse: llm.c's gpt2_backward, read off the tape),
// the block marks the MPI buckets rely on, and the memory plan's promises on
// the GPT (Note [Memory planner]): LayerNorm and GELU outputs recomputed,
// nothing alive at once sharing floats, the plan the same for any seed; the
// soft-cap's place in the head.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "autograd/planner.h"
#include "nn/model_fixture.h"
#include "support/plan_checks.h"

namespace {

std::vector<std::string> block_ops(const autograd::Tape& tape, size_t block) {
  std::vector<std::string> ops;
  const autograd::TapeBlock& b = tape.blocks().at(block);
  for (size_t e = b.begin; e < b.end; ++e) ops.push_back(tape.op_name(e));
  return ops;
}

autograd::Tape planning_tape(const nn::GPT& m, int64_t B, int64_t T) {
  autograd::Arena arena;
  autograd::Tape tape;
  tape.begin_planning();
  const int32_t none[1] = {0};
  nn::gpt_loss(autograd::OpContext{&arena, &tape}, m, none, none, B, T, 7);
  return tape;
}

}  // namespace

TEST_CASE("one block records its ops in the seed's order", "[gpt][tape]") {
  for (float dropout : {0.0f, 0.1f}) {
    INFO("dropout " << dropout);
    nn::GPTConfig c = testing::tiny_config();
    c.dropout = dropout;
    const nn::GPT m = testing::tiny_model(c);
    const autograd::Tape tape = planning_tape(m, 2, c.block_size);
    // Note [Block parts]: each block's attention half, its MLP half, then the head.
    REQUIRE(tape.blocks().size() == static_cast<size_t>(2 * c.n_layer + 1));
    const std::vector<std::string> attention_half =
        dropout > 0 ? std::vector<std::string>{"layernorm", "linear", "attention", "linear", "dropout", "add"}
                    : std::vector<std::string>{"layernorm", "linear", "attention", "linear", "add"};
    const std::vector<std::string> mlp_half =
        dropout > 0 ? std::vector<std::string>{"layernorm", "linear", "gelu", "linear", "dropout", "add"}
                    : std::vector<std::string>{"layernorm", "linear", "gelu", "linear", "add"};
    for (size_t l = 0; l < static_cast<size_t>(c.n_layer); ++l) {
      for (int part : {0, 1}) {
        const size_t i = 2 * l + static_cast<size_t>(part);
        CHECK(tape.blocks()[i].layer == static_cast<int64_t>(l));
        CHECK(tape.blocks()[i].part == part);
        CHECK(block_ops(tape, i) == (part == 0 ? attention_half : mlp_half));
        if (i > 0) CHECK(tape.blocks()[i].begin == tape.blocks()[i - 1].end);  // nothing between halves
      }
    }
    // Around the blocks: embedding (+ dropout) before; after, the head (ln_f,
    // lm_head) marked as layer -1, part 1, and the loss.
    CHECK(std::string(tape.op_name(0)) == "embedding");
    CHECK(tape.blocks()[0].begin == (dropout > 0 ? 2u : 1u));
    const size_t n = tape.size();
    const autograd::TapeBlock& head = tape.blocks().back();
    CHECK((head.layer == -1 && head.part == 1));
    CHECK(head.begin == n - 3);
    CHECK(head.end == n - 1);
    CHECK(block_ops(tape, tape.blocks().size() - 1) == std::vector<std::string>{"layernorm", "linear"});
    CHECK(std::string(tape.op_name(n - 1)) == "cross_entropy");
  }
}

TEST_CASE("the GPT's plan recomputes LayerNorm and GELU and keeps the rest", "[gpt][planner]") {
  const nn::GPTConfig c = testing::tiny_config();
  const nn::GPT m = testing::tiny_model(c);
  const autograd::Tape tape = planning_tape(m, 3, c.block_size);
  const autograd::MemoryPlan plan = autograd::plan_memory(tape);
  for (size_t e = 0; e < tape.size(); ++e) {
    const std::string op = tape.op_name(e);
    INFO("entry " << e << " " << op);
    CHECK(plan.recomputed[e] == (op == "layernorm" || op == "gelu"));
  }
  // The logits' gradient lies over the logits; no other gradient over data.
  int over_data = 0;
  for (const autograd::TapeTensor& t : tape.tensors())
    over_data += plan.alias[static_cast<size_t>(t.grad)] == t.data;
  CHECK(over_data == 1);
  // Buffers alive at the same moment never share a float.
  CHECK(testing::clashing_buffer_pairs(tape, plan) == 0);
  CHECK(plan.total_floats < plan.unplanned_floats / 2);
  // The plan is a function of the graph alone.
  const autograd::MemoryPlan again = nn::gpt_training_plan(m, 3, c.block_size);
  CHECK(again.offset == plan.offset);
  CHECK(again.total_floats == plan.total_floats);
}

TEST_CASE("with --logit-softcap the head ends in the soft-cap, and both logits' gradients lie over them",
          "[gpt][planner]") {
  nn::GPTConfig c = testing::tiny_config();
  c.logit_softcap = 15.0f;
  const nn::GPT m = testing::tiny_model(c);
  const autograd::Tape tape = planning_tape(m, 3, c.block_size);
  CHECK(block_ops(tape, tape.blocks().size() - 1) == std::vector<std::string>{"layernorm", "linear", "softcap"});
  CHECK(std::string(tape.op_name(tape.size() - 1)) == "cross_entropy");
  const autograd::MemoryPlan plan = autograd::plan_memory(tape);
  int over_data = 0;
  for (const autograd::TapeTensor& t : tape.tensors())
    over_data += plan.alias[static_cast<size_t>(t.grad)] == t.data;
  CHECK(over_data == 2);  // the raw logits' (the soft-cap's) and the capped ones' (the loss's)
  CHECK_FALSE(plan.recomputed[tape.size() - 2]);
  CHECK(testing::clashing_buffer_pairs(tape, plan) == 0);
}

TEST_CASE("the tape dump names every entry and the backward order", "[gpt][tape]") {
  const nn::GPTConfig c = testing::tiny_config();
  const nn::GPT m = testing::tiny_model(c);
  const autograd::Tape tape = planning_tape(m, 2, c.block_size);
  const std::string dump = autograd::tape_dump(tape, autograd::plan_memory(tape));
  CHECK(dump.find("cross_entropy") != std::string::npos);
  CHECK(dump.find("rerun") != std::string::npos);
  CHECK(dump.find("MiB planned") != std::string::npos);
  size_t lines = 0;
  for (char ch : dump) lines += ch == '\n';
  CHECK(lines >= 2 * tape.size());  // a forward and a backward line per entry
}
