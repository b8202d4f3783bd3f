// save_checkpoint: writes the layout of checkpoints/README.md into a
// temporary file and swaps it in atomically (Note [Atomic save]).
#include <variant>

#include "autograd/base/check.h"
#include "autograd/base/errors.h"
#include "autograd/base/atomic_file.h"
#include "checkpoints/checkpoint.h"
#include "checkpoints/h5_read.h"
#include "checkpoints/h5_write.h"
#include "checkpoints/layout.h"
#include "checkpoints/validate.h"

namespace checkpoints {

namespace {

// HDF5 strings are C strings: a NUL would silently cut the value short.
void require_no_nul(const std::string& value, const std::string& what) {
  if (value.find('\0') != std::string::npos)
    throw tg::DataError(what + " contains a NUL byte, which an HDF5 string attribute cannot hold");
}

void check_savable(const Checkpoint& meta, const nn::ParameterStore& store, bool store_moments) {
  std::string err = nn::config_error(meta.config);
  if (err.empty()) err = tokenizer_error(meta.tokenizer, meta.config.vocab_size);
  if (err.empty()) err = flags_error(meta.train.flags);
  if (!err.empty()) throw tg::DataError("refusing to write a checkpoint that could not be loaded: " + err);
  require_no_nul(meta.train.data_hash, "the data hash");
  require_no_nul(meta.train.run_dir, "the run directory");
  require_no_nul(meta.train.run_id, "the run id");
  for (const Flag& f : meta.train.flags) {
    require_no_nul(f.name, "a flag name");
    if (const auto* s = std::get_if<std::string>(&f.value)) require_no_nul(*s, "flag " + f.name);
  }
  // The store comes from parameter_store_create(meta.config): an internal
  // invariant, not user input.
  TG_CHECK(store.values.size() >= store.total);
  if (store_moments) TG_CHECK(store.m.size() >= store.total && store.v.size() >= store.total);
}

void write_config(const Node& root, const nn::GPTConfig& c) {
  Node g = create_group(root, layout::kConfig);
  write_int_attr(g, "vocab_size", c.vocab_size);
  write_int_attr(g, "block_size", c.block_size);
  write_int_attr(g, "n_layer", c.n_layer);
  write_int_attr(g, "n_head", c.n_head);
  write_int_attr(g, "n_embd", c.n_embd);
  write_int_attr(g, "bias", c.bias ? 1 : 0);
  write_int_attr(g, "tied", c.tied ? 1 : 0);
  write_double_attr(g, "dropout", c.dropout);  // float -> double is exact
  // pos_encoding, gelu, norm, mlp: Note [Model choices] in nn/config.h.
  for (const nn::ModelChoice& row : nn::model_choices()) write_string_attr(g, row.key, nn::choice_name(row, c));
}

// One float32 dataset per table entry, in PyTorch shape, straight from the
// flat buffer (no staging copy).
void write_tensors(const Node& group, const nn::ParameterStore& store, const float* buffer) {
  for (const nn::ParamInfo& p : store.table)
    write_dataset(group, p.name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, p.shape, buffer + p.offset);
}

void write_optimizer(const Node& root, const OptimizerState& o, const nn::ParameterStore& store,
                     bool with_moments, MomentSource* moments) {
  Node g = create_group(root, layout::kOptimizer);
  write_string_attr(g, "name", o.name);
  write_int_attr(g, "step", o.step);
  write_double_attr(g, "lr", o.lr);
  write_double_attr(g, "beta1", o.beta1);
  write_double_attr(g, "beta2", o.beta2);
  write_double_attr(g, "eps", o.eps);
  write_double_attr(g, "weight_decay", o.weight_decay);
  if (!with_moments) return;
  write_tensors(create_group(g, layout::kMoment1), store, moments ? moments->moment(0) : store.m.data());
  write_tensors(create_group(g, layout::kMoment2), store, moments ? moments->moment(1) : store.v.data());
}

void write_train(const Node& root, const TrainState& t) {
  Node g = create_group(root, layout::kTrain);
  write_int_attr(g, "step", t.step);
  write_int_attr(g, "tokens_seen", t.tokens_seen);
  write_uint_attr(g, "seed", t.seed);
  write_uint_array_attr(g, "rng_state", std::vector<uint64_t>(t.rng_state.begin(), t.rng_state.end()));
  write_int_attr(g, "sampler_position", t.sampler_position);
  write_double_attr(g, "best_val_loss", t.best_val_loss);
  write_double_attr(g, "train_seconds", t.train_seconds);
  write_string_attr(g, "data_hash", t.data_hash);
  write_string_attr(g, "run_dir", t.run_dir);
  write_string_attr(g, "run_id", t.run_id);
  Node flags = create_group(g, layout::kFlags, /*track_attr_order=*/true);
  for (const Flag& f : t.flags) {
    if (const auto* i = std::get_if<int64_t>(&f.value)) write_int_attr(flags, f.name, *i);
    else if (const auto* d = std::get_if<double>(&f.value)) write_double_attr(flags, f.name, *d);
    else write_string_attr(flags, f.name, std::get<std::string>(f.value));
  }
}

void write_tokenizer(const Node& root, const data::TokenizerSpec& tok) {
  Node g = create_group(root, layout::kTokenizer);
  write_string_attr(g, "type", tok.type);
  if (!tok.split.empty()) write_string_attr(g, "split", tok.split);  // absent: byte-class (Note [BPE pre-split])
  std::string bytes;
  std::vector<int64_t> offsets{0};
  for (const std::string& t : tok.tokens) {
    bytes += t;
    offsets.push_back(static_cast<int64_t>(bytes.size()));
  }
  write_dataset(g, layout::kTokenBytes, H5T_STD_U8LE, H5T_NATIVE_UINT8,
                {static_cast<int64_t>(bytes.size())}, bytes.data());
  write_dataset(g, layout::kTokenOffsets, H5T_STD_I64LE, H5T_NATIVE_INT64,
                {static_cast<int64_t>(offsets.size())}, offsets.data());
  // std::array<int32_t, 2> is two packed int32s, so the vector is [M, 2].
  static_assert(sizeof(std::array<int32_t, 2>) == 2 * sizeof(int32_t));
  write_dataset(g, layout::kMerges, H5T_STD_I32LE, H5T_NATIVE_INT32,
                {static_cast<int64_t>(tok.merges.size()), 2}, tok.merges.data());
}

void write_file(const std::string& file_path, const Checkpoint& meta,
                const nn::ParameterStore& store, bool with_optimizer, MomentSource* moments) {
  // v1.8 structures and later: checksummed superblock and object headers
  // (Note [Checksummed metadata] in h5_read.cpp), readable by HDF5 >= 1.8.
  Handle fapl = checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "cannot create " + file_path);
  check_status(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST),
               "cannot create " + file_path);
  Handle file = checked(H5Fcreate(file_path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                        H5Fclose, "cannot create " + file_path);
  {
    Node root = open_root(file.get());
    write_string_attr(root, "format", layout::kFormat);
    write_int_attr(root, "format_version", kFormatVersion);
    write_config(root, meta.config);
    write_tensors(create_group(root, layout::kModel), store, store.values.floats());
    write_optimizer(root, meta.optimizer, store, with_optimizer, moments);
    write_train(root, meta.train);
    write_tokenizer(root, meta.tokenizer);
  }
  // Closing the file is where HDF5 writes its last metadata: a full disk can
  // surface only here, so both calls are checked.
  check_status(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "cannot flush " + file_path);
  check_status(file.close(), "cannot finish writing " + file_path);
}

}  // namespace

void save_checkpoint(const std::string& path, const Checkpoint& meta,
                     const nn::ParameterStore& store, bool with_optimizer, MomentSource* moments) {
  QuietErrors quiet;
  try {
    check_savable(meta, store, with_optimizer && !moments);
    tg::TempFile temp(path);
    write_file(temp.path(), meta, store, with_optimizer, moments);
    temp.commit();
  } catch (const tg::DataError& e) {
    throw tg::DataError("checkpoint " + path + ": cannot save: " + e.what());
  }
}

}  // namespace checkpoints
