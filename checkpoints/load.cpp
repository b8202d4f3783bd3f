// load_checkpoint: reads a checkpoint as an untrusted file, checking each
// claim before acting on it (Note [Loading untrusted files]).
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>

#include "autograd/errors.h"
#include "checkpoints/checkpoint.h"
#include "checkpoints/h5_read.h"
#include "checkpoints/layout.h"
#include "checkpoints/validate.h"

namespace checkpoints {

// Note [Loading untrusted files]: a checkpoint may be truncated, from another
// program, or crafted (a fuzzer drives this function). The order matters:
// (1) the HDF5 signature, a checksummed superblock (read by us, before HDF5
// parses anything) and a clean open (HDF5 itself detects a file cut short);
// (2) our format name and version; (3) /config, validated by
// nn::config_error; (4) the size the config implies, against the file's size,
// before allocating anything for it; (5) every object's header version
// (checksummed, Note [Checksummed metadata]), and every dataset's presence,
// type, rank and dimensions before reading it into the flat buffers;
// (6) values: no NaN/Inf in weights or moments, tokenizer offsets and merge
// ids in range. Each failure is one tg::DataError. Checksums make damage a
// clean error; a file crafted with valid checksums to hit a bug inside HDF5's
// own decoders is beyond what this module can check.

namespace {

struct LoadContext {
  int64_t file_size = 0;
  // Bytes any dataset or model may claim before we call it implausible.
  int64_t max_bytes() const { return file_size * layout::kMaxInflation + 4096; }
};

nn::GPTConfig read_config(const Node& root) {
  Node g = open_group(root, layout::kConfig);
  nn::GPTConfig c;
  c.vocab_size = read_int_attr(g, "vocab_size");
  c.block_size = read_int_attr(g, "block_size");
  c.n_layer = read_int_attr(g, "n_layer");
  c.n_head = read_int_attr(g, "n_head");
  c.n_embd = read_int_attr(g, "n_embd");
  c.bias = read_bool_attr(g, "bias");
  c.tied = read_bool_attr(g, "tied");
  c.dropout = static_cast<float>(read_double_attr(g, "dropout"));
  const std::string pos = read_string_attr(g, "pos_encoding");
  if (!nn::parse_pos_encoding(pos, &c.pos_encoding))
    throw tg::DataError("/config pos_encoding is '" + pos + "', expected learned or sinusoidal");
  // Checkpoints written before the attribute existed used the tanh GELU.
  if (has_attr(g, "gelu")) {
    const std::string gelu = read_string_attr(g, "gelu");
    if (!nn::parse_gelu(gelu, &c.gelu))
      throw tg::DataError("/config gelu is '" + gelu + "', expected tanh or erf");
  }
  const std::string err = nn::config_error(c);
  if (!err.empty()) throw tg::DataError("/config is invalid: " + err);
  return c;
}

// Refuses a config that claims more parameters than the file could hold, so a
// tiny file cannot make us allocate terabytes (see layout::kMaxInflation).
void check_plausible_size(const nn::GPTConfig& c, const LoadContext& ctx) {
  const int64_t bytes = min_parameter_count(c) * 4;
  if (bytes > ctx.max_bytes())
    throw tg::DataError("/config describes a model of at least " + std::to_string(bytes) +
                        " bytes of float32 weights, but the file has only " +
                        std::to_string(ctx.file_size) +
                        " bytes: the file is truncated or its /config is wrong");
}

enum class Values { Any, NonNegative };

// Reads every tensor of the table from `group` into `buffer`, after checking
// dtype and shape, and rejects NaN/Inf (and negatives for second moments).
void read_tensors(const Node& group, const nn::ParameterStore& store, float* buffer, Values values) {
  for (const nn::ParamInfo& p : store.table) {
    Node ds = open_dataset(group, p.name);
    require_float32(ds);
    const std::vector<int64_t> dims = dataset_dims(ds);
    if (dims != p.shape)
      throw tg::DataError("dataset " + ds.path + " has shape " + shape_string(dims) + ", expected " +
                          shape_string(p.shape) + " from /config");
    float* dst = buffer + p.offset;
    read_dataset(ds, H5T_NATIVE_FLOAT, dst);
    for (int64_t i = 0; i < p.numel; ++i) {
      if (!std::isfinite(dst[i]))
        throw tg::DataError("dataset " + ds.path + " holds " + (std::isnan(dst[i]) ? "NaN" : "Inf") +
                            " at element " + std::to_string(i) +
                            ": the run had diverged when it was saved; use an earlier checkpoint");
      if (values == Values::NonNegative && dst[i] < 0)
        throw tg::DataError("dataset " + ds.path + " holds a negative second moment at element " +
                            std::to_string(i));
    }
  }
}

int64_t read_count_attr(const Node& g, const std::string& name) {
  const int64_t v = read_int_attr(g, name);
  if (v < 0) throw tg::DataError("attribute " + name + " of " + g.path + " is negative");
  return v;
}

// Returns true when moments were loaded into store.m and store.v.
bool read_optimizer(const Node& root, OptimizerState* o, nn::ParameterStore& store) {
  if (!has_child(root, layout::kOptimizer)) return false;
  Node g = open_group(root, layout::kOptimizer);
  o->step = read_count_attr(g, "step");
  o->lr = read_double_attr(g, "lr");
  o->beta1 = read_double_attr(g, "beta1");
  o->beta2 = read_double_attr(g, "beta2");
  o->eps = read_double_attr(g, "eps");
  o->weight_decay = read_double_attr(g, "weight_decay");
  const bool has_m = has_child(g, layout::kMoment1), has_v = has_child(g, layout::kMoment2);
  if (!has_m && !has_v) return false;  // saved without moments
  if (has_m != has_v)
    throw tg::DataError("/optimizer has only one of the moment groups m and v; both or neither");
  read_tensors(open_group(g, layout::kMoment1), store, store.m.data(), Values::Any);
  read_tensors(open_group(g, layout::kMoment2), store, store.v.data(), Values::NonNegative);
  return true;
}

TrainState read_train(const Node& root) {
  Node g = open_group(root, layout::kTrain);
  TrainState t;
  t.step = read_count_attr(g, "step");
  t.tokens_seen = read_count_attr(g, "tokens_seen");
  t.seed = read_uint_attr(g, "seed");
  const std::vector<uint64_t> rng = read_uint_array_attr(g, "rng_state", 4);
  for (int i = 0; i < 4; ++i) t.rng_state[i] = rng[i];
  t.sampler_position = read_count_attr(g, "sampler_position");
  t.best_val_loss = read_double_attr(g, "best_val_loss");
  t.data_hash = read_string_attr(g, "data_hash");
  t.run_dir = read_string_attr(g, "run_dir");
  if (has_child(g, layout::kFlags))  // optional: a converted model has none
    for (auto& [name, value] : read_all_attrs(open_group(g, layout::kFlags)))
      t.flags.push_back(Flag{name, value});
  return t;
}

// A rank-1 dataset's length, refused when its bytes are implausible for the
// file before anything is allocated for it.
int64_t vector_length(const Node& ds, int64_t element_bytes, const LoadContext& ctx) {
  const std::vector<int64_t> dims = dataset_dims(ds);
  if (dims.size() != 1)
    throw tg::DataError("dataset " + ds.path + " has shape " + shape_string(dims) + ", expected one dimension");
  if (dims[0] > ctx.max_bytes() / element_bytes)
    throw tg::DataError("dataset " + ds.path + " claims " + std::to_string(dims[0]) +
                        " elements, implausible for a file of " + std::to_string(ctx.file_size) + " bytes");
  return dims[0];
}

data::TokenizerSpec read_tokenizer(const Node& root, int64_t vocab_size, const LoadContext& ctx) {
  Node g = open_group(root, layout::kTokenizer);
  data::TokenizerSpec spec;
  spec.type = read_string_attr(g, "type");
  if (!known_tokenizer_type(spec.type))
    throw tg::DataError("/tokenizer type is '" + spec.type + "', expected char, byte, bpe or gpt2");

  Node off_ds = open_dataset(g, layout::kTokenOffsets);
  require_integer(off_ds, 0, false);
  const int64_t n_offsets = vector_length(off_ds, 8, ctx);
  if (n_offsets < 2 || n_offsets - 1 > vocab_size)
    throw tg::DataError("dataset " + off_ds.path + " has " + std::to_string(n_offsets) +
                        " entries, expected between 2 and vocab_size + 1 = " + std::to_string(vocab_size + 1));
  Node bytes_ds = open_dataset(g, layout::kTokenBytes);
  require_integer(bytes_ds, 1, true);
  const int64_t n_bytes = vector_length(bytes_ds, 1, ctx);

  std::vector<int64_t> offsets(static_cast<size_t>(n_offsets));
  read_dataset(off_ds, H5T_NATIVE_INT64, offsets.data());
  std::string bytes(static_cast<size_t>(n_bytes), '\0');
  read_dataset(bytes_ds, H5T_NATIVE_UINT8, &bytes[0]);
  if (offsets.front() != 0 || offsets.back() != n_bytes)
    throw tg::DataError("dataset " + off_ds.path + " must start at 0 and end at " + std::to_string(n_bytes) +
                        " (the length of " + bytes_ds.path + ")");
  for (int64_t i = 0; i + 1 < n_offsets; ++i) {
    if (offsets[i + 1] < offsets[i])
      throw tg::DataError("dataset " + off_ds.path + " decreases at index " + std::to_string(i + 1) +
                          " (" + std::to_string(offsets[i]) + " then " + std::to_string(offsets[i + 1]) +
                          "): offsets must be non-decreasing");
    spec.tokens.push_back(bytes.substr(offsets[i], offsets[i + 1] - offsets[i]));
  }

  Node merges_ds = open_dataset(g, layout::kMerges);
  require_integer(merges_ds, 0, false);
  const std::vector<int64_t> dims = dataset_dims(merges_ds);
  if (dims.size() != 2 || dims[1] != 2)
    throw tg::DataError("dataset " + merges_ds.path + " has shape " + shape_string(dims) + ", expected [M,2]");
  if (dims[0] > ctx.max_bytes() / 8)
    throw tg::DataError("dataset " + merges_ds.path + " claims " + std::to_string(dims[0]) +
                        " merges, implausible for a file of " + std::to_string(ctx.file_size) + " bytes");
  spec.merges.resize(static_cast<size_t>(dims[0]));
  // Out-of-range int64 ids saturate to int32 limits and fail the range check.
  read_dataset(merges_ds, H5T_NATIVE_INT32, spec.merges.data());

  const std::string err = tokenizer_error(spec, vocab_size);
  if (!err.empty()) throw tg::DataError(err);
  return spec;
}

// Reads the superblock's first bytes ourselves, before HDF5 parses anything:
// tapegpt files start with the signature and a checksummed superblock
// (version 2 or 3; Note [Checksummed metadata] in h5_read.cpp).
void check_superblock(const std::string& path) {
  static const char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  char head[9] = {0};
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw tg::DataError(std::string("cannot open: ") + std::strerror(errno));
  const size_t n = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  if (n < sizeof head || std::memcmp(head, kSignature, 8) != 0)
    throw tg::DataError("is an HDF5 file with a user block or a damaged start; not a tapegpt checkpoint");
  const int version = static_cast<unsigned char>(head[8]);
  if (version < 2)
    throw tg::DataError("is an HDF5 file with a version-" + std::to_string(version) +
                        " superblock (no checksums), so not one tapegpt wrote; re-save it with tapegpt "
                        "(h5py: libver=('v108', 'latest'))");
}

Handle open_file(const std::string& path, LoadContext* ctx) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    throw tg::DataError(std::string("cannot open: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw tg::DataError("is a directory, expected a checkpoint .h5 file");
  if (!S_ISREG(st.st_mode)) throw tg::DataError("is not a regular file");
  ctx->file_size = static_cast<int64_t>(st.st_size);

  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 == 0)
    throw tg::DataError("is not an HDF5 file (no HDF5 signature); pass a checkpoint written by tapegpt");
  if (is_hdf5 < 0) throw_h5_error("cannot read the file");
  check_superblock(path);
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) {
    const std::string detail = h5_error_detail();
    if (detail.find("truncated") != std::string::npos)
      throw tg::DataError("is truncated (" + detail +
                          "): the save or copy did not finish; use an earlier checkpoint");
    throw tg::DataError("is damaged: HDF5 cannot open it (" + detail + ")");
  }
  return Handle(id, H5Fclose);
}

Loaded load_file(const std::string& path, bool with_optimizer) {
  LoadContext ctx;
  Handle file = open_file(path, &ctx);
  Node root = open_root(file.get());

  if (!has_attr(root, "format"))
    throw tg::DataError("is an HDF5 file but not a tapegpt checkpoint (no root attribute 'format')");
  const std::string format = read_string_attr(root, "format");
  if (format != layout::kFormat)
    throw tg::DataError("is an HDF5 file in format '" + format + "', not a tapegpt checkpoint");
  const int64_t version = read_int_attr(root, "format_version");
  if (version != kFormatVersion)
    throw tg::DataError("has format_version " + std::to_string(version) + ", but this tapegpt reads only version " +
                        std::to_string(kFormatVersion) + ": load it with the tapegpt version that wrote it");

  Loaded out;
  out.meta.config = read_config(root);
  check_plausible_size(out.meta.config, ctx);
  out.store = nn::make_parameter_store(out.meta.config);
  read_tensors(open_group(root, layout::kModel), out.store, out.store.params.data(), Values::Any);
  if (with_optimizer) out.has_optimizer = read_optimizer(root, &out.meta.optimizer, out.store);
  out.meta.train = read_train(root);
  out.meta.tokenizer = read_tokenizer(root, out.meta.config.vocab_size, ctx);
  return out;
}

}  // namespace

Loaded load_checkpoint(const std::string& path, bool with_optimizer) {
  QuietErrors quiet;
  try {
    return load_file(path, with_optimizer);
  } catch (const tg::DataError& e) {
    throw tg::DataError("checkpoint " + path + ": " + e.what());
  } catch (const std::bad_alloc&) {
    throw tg::DataError("checkpoint " + path + ": out of memory while loading it");
  }
}

}  // namespace checkpoints
