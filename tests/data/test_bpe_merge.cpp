// The fast heap merge against the reference round-by-round loop (the oracle),
// with our BPE's merges and with GPT-2's.
#include <catch2/catch.hpp>

#include <unordered_map>

#include "autograd/base/rng.h"
#include "data/bpe_merge.h"
#include "data/bpe_train.h"
#include "data/gpt2_vocab.h"
#include "support/files.h"

namespace {

// A merge table from a spec's real merges (no comma aliases), ids by bytes.
data::MergeTable table_of(const data::TokenizerSpec& spec) {
  std::unordered_map<std::string, int32_t> id_of;
  for (size_t i = 0; i < spec.tokens.size(); ++i) id_of.emplace(spec.tokens[i], static_cast<int32_t>(i));
  data::MergeTable t;
  for (int b = 0; b < 256; ++b) t.byte_ids[b] = id_of.at(std::string(1, static_cast<char>(b)));
  for (size_t r = 0; r < spec.merges.size(); ++r) {
    const auto [l, rr] = spec.merges[r];
    t.rules[data::merge_key(l, rr)] = {static_cast<int32_t>(r), id_of.at(spec.tokens[l] + spec.tokens[rr])};
  }
  return t;
}

void check_same(const data::MergeTable& t, const std::string& alphabet, uint64_t seed) {
  tg::Rng rng(seed);
  for (int trial = 0; trial < 40; ++trial) {
    const auto len = 1 + rng.below(3000);
    std::vector<int32_t> ids;
    for (uint64_t i = 0; i < len; ++i) ids.push_back(t.byte_ids[static_cast<unsigned char>(alphabet[rng.below(alphabet.size())])]);
    std::vector<int32_t> slow = ids, fast = ids;
    data::bpe_merge_rounds(t, slow);
    data::bpe_merge_heap(t, fast);
    INFO("trial " << trial << ", length " << len);
    CHECK(fast == slow);
  }
}

}  // namespace

TEST_CASE("heap merge equals the round-by-round merge", "[bpe]") {
  const std::string letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const data::MergeTable gpt2 = table_of(data::gpt2_spec());
  check_same(gpt2, letters, 1);
  check_same(gpt2, "eeeeetaoin ", 2);
  check_same(gpt2, "ACGT", 3);
  check_same(gpt2, "=-=-*", 4);
  const std::string text = testing::read_bytes("data/tinyshakespeare.txt").substr(0, 200000);
  const data::MergeTable bpe = table_of(data::bpe_train(text, 1024));
  check_same(bpe, letters, 5);
  check_same(bpe, "eeeeetaoin ", 6);
  check_same(bpe, "aaaab", 7);
}
