// Note [All-reduce overlap]: a bucket is final after the first tape entry of
// its part of the model (Note [Block parts]), so the backward pass completes
// the head first, then each block's MLP half before its attention half, the
// last block first, and the embeddings (tied to lm_head) last; and every
// gradient belongs to exactly one bucket.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "nn/model_fixture.h"
#include "train/distributed/distributed.h"
#include "train/distributed/grad_buckets.h"

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
    // The embeddings, the head, then each block's attention and MLP halves.
    REQUIRE(buckets.buckets() == 2 + 2 * 3);
    buckets.plan(tape);
    std::vector<size_t> order;  // bucket ready indices, in the order the backward reaches them
    train::Distributed one;  // one process: start_sum does nothing
    tape.backward(loss, 1.0f, [&](size_t i) {
      buckets.entry_done(i, one, m.store.grads.data());
      order.push_back(i);
    });
    REQUIRE(order.size() == tape.size());
    // Entry 0 (the embedding) closes the embeddings' bucket; the head closes
    // first, then block 2's MLP half, its attention half, block 1's MLP half …
    REQUIRE(buckets.ready_at(0) == 0);
    for (size_t i = 2; i < buckets.buckets(); ++i) REQUIRE(buckets.ready_at(i) > buckets.ready_at(i - 1 == 1 ? 0 : i - 1));
    REQUIRE(buckets.ready_at(1) > buckets.ready_at(buckets.buckets() - 1));
    // Each part's bucket is final at the part's first entry, its LayerNorm.
    REQUIRE(tape.blocks().size() == 2 * 3 + 1);  // the halves, then the head
    for (size_t i = 0; i < tape.blocks().size(); ++i) {
      const autograd::TapeBlock& part = tape.blocks()[i];
      const size_t bucket = part.layer < 0 ? 1 : 2 + 2 * static_cast<size_t>(part.layer) + static_cast<size_t>(part.part);
      INFO("layer " << part.layer << " part " << part.part);
      CHECK(buckets.ready_at(bucket) == part.begin);
      CHECK(std::string(tape.op_name(part.begin)) == "layernorm");
    }
    REQUIRE(buckets.elements() == m.store.num_parameters());
  }
}
