// Note [All-reduce overlap]: a bucket is final after the earliest tape entry
// that reads one of its tensors, so the backward pass completes the last
// block first and the embeddings (tied to lm_head) last; and every gradient
// belongs to exactly one bucket.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "nn/model_fixture.h"
#include "train/distributed.h"
#include "train/grad_buckets.h"

TEST_CASE("gradient buckets complete from the last block to the embeddings", "[distributed]") {
  for (bool tied : {true, false}) {
    INFO((tied ? "tied" : "untied") << " lm_head");
    nn::GPTConfig c = testing::tiny_config();
    c.n_layer = 3;
    c.tied = tied;
    nn::GPT m = testing::tiny_model(c);
    const testing::Batch b = testing::tiny_batch(2, c.block_size, c.vocab_size);
    autograd::Arena arena;
    autograd::Tape tape;
    autograd::Tensor loss;
    testing::model_loss(m, b, arena, &tape, &loss);

    train::GradBuckets buckets(m.store);
    REQUIRE(buckets.buckets() == 4);  // the rest, then blocks 0, 1, 2
    buckets.plan(tape);
    std::vector<size_t> order;  // bucket ready indices, in the order the backward reaches them
    train::Distributed one;  // one process: start_sum does nothing
    tape.backward(loss, 1.0f, [&](size_t i) {
      buckets.entry_done(i, one, m.store.grads.data());
      order.push_back(i);
    });
    REQUIRE(order.size() == tape.size());
    // Entry 0 (the embedding) closes the rest's bucket; block L closes after
    // block L+1, and before the embeddings.
    REQUIRE(buckets.ready_at(0) == 0);
    REQUIRE(buckets.ready_at(3) > buckets.ready_at(2));
    REQUIRE(buckets.ready_at(2) > buckets.ready_at(1));
    REQUIRE(buckets.ready_at(1) > 0);
    // Each block's bucket is final at the block's first entry, its ln_1.
    for (size_t l = 0; l < 3; ++l) {
      REQUIRE(tape.blocks()[l].layer == static_cast<int64_t>(l));
      CHECK(buckets.ready_at(l + 1) == tape.blocks()[l].begin);
      CHECK(std::string(tape.op_name(tape.blocks()[l].begin)) == "layernorm");
    }
    REQUIRE(buckets.elements() == m.store.num_parameters());
  }
}
