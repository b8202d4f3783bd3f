// Round trips: everything saved comes back bit for bit, with and without the
// optimizer moments, for every config variant; the file is plain HDF5.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <variant>

#include "autograd/base/errors.h"
#include "tests/checkpoints/fixtures.h"
#include "tests/support/no_skip.h"

using namespace checkpoints_test;
using checkpoints::load_checkpoint;
using checkpoints::save_checkpoint;

namespace {

void require_same_meta(const checkpoints::Checkpoint& a, const checkpoints::Checkpoint& b) {
  CHECK(a.config.vocab_size == b.config.vocab_size);
  CHECK(a.config.block_size == b.config.block_size);
  CHECK(a.config.n_layer == b.config.n_layer);
  CHECK(a.config.n_head == b.config.n_head);
  CHECK(a.config.n_embd == b.config.n_embd);
  CHECK(a.config.bias == b.config.bias);
  CHECK(a.config.tied == b.config.tied);
  CHECK(a.config.dropout == b.config.dropout);
  for (const nn::ModelChoice& row : nn::model_choices()) {  // pos_encoding, gelu, norm, mlp
    INFO(row.key);
    CHECK(row.get(a.config) == row.get(b.config));
  }

  CHECK(a.train.step == b.train.step);
  CHECK(a.train.tokens_seen == b.train.tokens_seen);
  CHECK(a.train.seed == b.train.seed);
  CHECK(a.train.rng_state == b.train.rng_state);
  CHECK(a.train.sampler_position == b.train.sampler_position);
  CHECK(a.train.best_val_loss == b.train.best_val_loss);
  CHECK(a.train.train_seconds == b.train.train_seconds);
  CHECK(a.train.data_hash == b.train.data_hash);
  CHECK(a.train.run_dir == b.train.run_dir);
  REQUIRE(a.train.flags.size() == b.train.flags.size());
  for (size_t i = 0; i < a.train.flags.size(); ++i) {
    CHECK(a.train.flags[i].name == b.train.flags[i].name);    // order kept too
    CHECK(a.train.flags[i].value == b.train.flags[i].value);  // type and value
  }

  CHECK(a.tokenizer.type == b.tokenizer.type);
  CHECK(a.tokenizer.tokens == b.tokenizer.tokens);
  CHECK(a.tokenizer.merges == b.tokenizer.merges);
  CHECK(a.tokenizer.split == b.tokenizer.split);
}

void require_same_optimizer(const checkpoints::OptimizerState& a, const checkpoints::OptimizerState& b) {
  CHECK(a.step == b.step);
  CHECK(a.lr == b.lr);
  CHECK(a.beta1 == b.beta1);
  CHECK(a.beta2 == b.beta2);
  CHECK(a.eps == b.eps);
  CHECK(a.weight_decay == b.weight_decay);
}

}  // namespace

TEST_CASE("checkpoint round trip is bit-exact, moments and all", "[checkpoints]") {
  TempDir dir;
  const std::string path = dir.file("ckpt.h5");
  const nn::GPTConfig config = tiny_checkpoint_config();
  const checkpoints::Checkpoint meta = full_meta(config);
  const nn::ParameterStore store = filled_store(config, 7);
  save_checkpoint(path, meta, store);
  CHECK(dir.listing() == "ckpt.h5");  // no temporary file left behind

  checkpoints::Loaded loaded = load_checkpoint(path);
  CHECK(loaded.has_optimizer);
  require_same_meta(loaded.meta, meta);
  require_same_optimizer(loaded.meta.optimizer, meta.optimizer);
  CHECK(loaded.meta.tokenizer.tokens[1].size() == 4);  // embedded NUL survived
  CHECK(same_bits(loaded.store, store, Buffer::Params));
  CHECK(same_bits(loaded.store, store, Buffer::M));
  CHECK(same_bits(loaded.store, store, Buffer::V));
  CHECK(all_zero(loaded.store, Buffer::Params) == false);
}

TEST_CASE("checkpoint round trip covers every config variant and merges", "[checkpoints]") {
  TempDir dir;
  const std::string path = dir.file("ckpt.h5");
  for (int variant = 0; variant < 4; ++variant) {
    nn::GPTConfig config = tiny_checkpoint_config();
    config.bias = variant % 2 == 0;
    config.tied = variant < 2;
    config.pos_encoding = variant == 3 ? nn::PosEncoding::Sinusoidal : nn::PosEncoding::Learned;
    config.dropout = 0.0f;
    checkpoints::Checkpoint meta = full_meta(config);
    meta.tokenizer.type = "bpe";
    meta.tokenizer.tokens.pop_back();  // fewer tokens than vocab_size is allowed
    meta.tokenizer.merges = {{3, 4}, {0, 9}, {9, 9}};
    meta.tokenizer.split = variant == 1 ? "gpt2" : "";  // Note [BPE pre-split]
    meta.train.flags.clear();
    const nn::ParameterStore store = filled_store(config, 100 + variant);
    save_checkpoint(path, meta, store);
    checkpoints::Loaded loaded = load_checkpoint(path);
    INFO("variant " << variant);
    require_same_meta(loaded.meta, meta);
    CHECK(same_bits(loaded.store, store, Buffer::Params));
    CHECK(same_bits(loaded.store, store, Buffer::V));
  }
}

TEST_CASE("checkpoint round trip of each model choice", "[checkpoints]") {
  TempDir dir;
  const std::string path = dir.file("ckpt.h5");
  for (const nn::ModelChoice& row : nn::model_choices())
    for (size_t value = 0; value < row.names.size(); ++value)
      for (bool bias : {true, false}) {
        nn::GPTConfig config = tiny_checkpoint_config();
        config.bias = bias;
        row.set(config, static_cast<int>(value));
        if (!nn::config_error(config).empty()) continue;
        INFO(row.key << " " << row.names[value] << (bias ? ", bias" : ", no bias"));
        const checkpoints::Checkpoint meta = full_meta(config);
        const nn::ParameterStore store = filled_store(config, 200 + value);
        save_checkpoint(path, meta, store);
        bool written = false;  // always written, defaults included
        edit_h5(path, [&](hid_t file) { written = H5Aexists_by_name(file, "/config", row.key, H5P_DEFAULT) > 0; });
        CHECK(written);
        checkpoints::Loaded loaded = load_checkpoint(path);
        require_same_meta(loaded.meta, meta);
        CHECK(same_bits(loaded.store, store, Buffer::Params));
        CHECK(same_bits(loaded.store, store, Buffer::M));
      }
}

TEST_CASE("a bpe's split is kept, absent means byte-class, and an unknown one is refused", "[checkpoints]") {
  TempDir dir;
  const std::string path = dir.file("ckpt.h5");
  const nn::GPTConfig config = tiny_checkpoint_config();
  checkpoints::Checkpoint meta = full_meta(config);
  meta.tokenizer.type = "bpe";
  meta.tokenizer.merges = {{3, 4}};
  save_checkpoint(path, meta, filled_store(config, 7));
  bool written = true;  // byte-class: no attribute, as in files from before it
  edit_h5(path, [&](hid_t file) { written = H5Aexists_by_name(file, "/tokenizer", "split", H5P_DEFAULT) > 0; });
  CHECK_FALSE(written);
  CHECK(load_checkpoint(path).meta.tokenizer.split.empty());
  edit_h5(path, [](hid_t file) { set_string_attr(file, "/tokenizer", "split", "gpt2"); });
  CHECK(load_checkpoint(path).meta.tokenizer.split == "gpt2");
  edit_h5(path, [](hid_t file) { set_string_attr(file, "/tokenizer", "split", "gpt9"); });
  CHECK_THROWS_WITH(load_checkpoint(path), Catch::Contains("/tokenizer split"));
  meta.tokenizer.type = "char";  // only bpe has a split
  meta.tokenizer.merges.clear();
  meta.tokenizer.split = "gpt2";
  CHECK_THROWS_AS(save_checkpoint(path, meta, filled_store(config, 7)), tg::DataError);
}

TEST_CASE("a checkpoint without the newer /config choices reads as the defaults", "[checkpoints]") {
  // Written before --gelu, --norm and --mlp existed: tanh GELU, LayerNorm, GELU MLP.
  TempDir dir;
  const std::string path = dir.file("old.h5");
  const nn::GPTConfig config = tiny_checkpoint_config();
  save_checkpoint(path, full_meta(config), filled_store(config, 5));
  edit_h5(path, [](hid_t file) {
    for (const char* name : {"gelu", "norm", "mlp"}) H5Adelete_by_name(file, "/config", name, H5P_DEFAULT);
  });
  const checkpoints::Loaded loaded = load_checkpoint(path);
  CHECK(loaded.meta.config.gelu == kernels::GeluKind::Tanh);
  CHECK(loaded.meta.config.norm == nn::NormKind::LayerNorm);
  CHECK(loaded.meta.config.mlp == nn::MlpKind::Gelu);
  CHECK(loaded.meta.config.pos_encoding == nn::PosEncoding::Learned);
}

TEST_CASE("checkpoint without optimizer: no moments written or read", "[checkpoints]") {
  TempDir dir;
  const nn::GPTConfig config = tiny_checkpoint_config();
  const checkpoints::Checkpoint meta = full_meta(config);
  const nn::ParameterStore store = filled_store(config, 3);

  SECTION("saved without moments: optimizer attrs kept, moments absent") {
    const std::string path = dir.file("eval.h5");
    save_checkpoint(path, meta, store, /*with_optimizer=*/false);
    bool has_m = true;
    edit_h5(path, [&](hid_t file) { has_m = H5Lexists(file, "/optimizer/m", H5P_DEFAULT) > 0; });
    CHECK_FALSE(has_m);
    checkpoints::Loaded loaded = load_checkpoint(path, /*with_optimizer=*/true);
    CHECK_FALSE(loaded.has_optimizer);
    require_same_optimizer(loaded.meta.optimizer, meta.optimizer);
    CHECK(same_bits(loaded.store, store, Buffer::Params));
    CHECK(all_zero(loaded.store, Buffer::M));
    CHECK(all_zero(loaded.store, Buffer::V));
  }
  SECTION("full file loaded without moments") {
    const std::string path = dir.file("full.h5");
    save_checkpoint(path, meta, store, true);
    checkpoints::Loaded loaded = load_checkpoint(path, /*with_optimizer=*/false);
    CHECK_FALSE(loaded.has_optimizer);
    require_same_meta(loaded.meta, meta);
    CHECK(same_bits(loaded.store, store, Buffer::Params));
    CHECK(all_zero(loaded.store, Buffer::M));
  }
}

TEST_CASE("saving over an existing checkpoint replaces it", "[checkpoints]") {
  TempDir dir;
  const std::string path = dir.file("ckpt.h5");
  const nn::GPTConfig config = tiny_checkpoint_config();
  checkpoints::Checkpoint meta = full_meta(config);
  save_checkpoint(path, meta, filled_store(config, 1));
  meta.train.step = 99;
  const nn::ParameterStore second = filled_store(config, 2);
  save_checkpoint(path, meta, second);
  checkpoints::Loaded loaded = load_checkpoint(path);
  CHECK(loaded.meta.train.step == 99);
  CHECK(same_bits(loaded.store, second, Buffer::Params));
  CHECK(dir.listing() == "ckpt.h5");
}

TEST_CASE("checkpoint files are plain HDF5 that h5dump reads", "[checkpoints]") {
  if (std::system("command -v h5dump > /dev/null 2>&1") != 0) {
    if (test_support::no_skip()) FAIL("h5dump not installed (apt-get install hdf5-tools)");
    WARN("h5dump not installed (apt-get install hdf5-tools); skipping");
    return;
  }
  TempDir dir;
  const std::string path = dir.file("ckpt.h5");
  const nn::GPTConfig config = tiny_checkpoint_config();
  save_checkpoint(path, full_meta(config), filled_store(config, 5));
  const std::string out = dir.file("header.txt");
  REQUIRE(std::system(("h5dump -H '" + path + "' > '" + out + "'").c_str()) == 0);
  const std::string header = read_bytes(out);
  CHECK(header.find("DATASET \"transformer.h.0.attn.c_attn.weight\"") != std::string::npos);
  CHECK(header.find("H5T_IEEE_F32LE") != std::string::npos);
  CHECK(header.find("( 24, 8 )") != std::string::npos);  // [3C, C] in PyTorch order
  CHECK(header.find("ATTRIBUTE \"format_version\"") != std::string::npos);
}
