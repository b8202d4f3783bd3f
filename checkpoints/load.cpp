// load_checkpoint: reads a checkpoint as an untrusted file, checking each
// claim before acting on it (Note [Loading untrusted files]).
#include <cmath>
#include <new>
#include <vector>

#include "autograd/base/errors.h"
#include "checkpoints/checkpoint.h"
#include "checkpoints/h5_read.h"
#include "checkpoints/layout.h"
#include "checkpoints/read_meta.h"
#include "checkpoints/validate.h"

namespace checkpoints {

// Note [Loading untrusted files]: a checkpoint may be truncated, from another
// program, or crafted (a fuzzer drives this function). The order matters:
// (1) the HDF5 signature, a checksummed superblock (read by us, before HDF5
// parses anything) and a clean open (HDF5 itself detects a file cut short);
// (2) our format name and version (Note [Dataset checksums]: from version 2
// every dataset must carry a checksum, verified as it is read); (3) /config, validated by
// nn::config_error; (4) the size the config implies, against the file's size,
// before allocating anything for it; (5) every object's header version
// (checksummed, Note [Checksummed metadata]), and every dataset's presence,
// type, rank and dimensions before reading it into the flat buffers;
// (6) values: no NaN/Inf in weights or moments, tokenizer offsets and merge
// ids in range. Each failure is one tg::DataError. Checksums make damage a
// clean error; a file crafted with valid checksums to hit a bug inside HDF5's
// own decoders is beyond what this module can check.

namespace {

// Refuses a config that claims more parameters than the file could hold, so a
// tiny file cannot make us allocate terabytes (see layout::kMaxInflation).
void check_plausible_size(const nn::GPTConfig& c, const LoadContext& ctx) {
  const int64_t bytes = nn::param_layout(c).num_parameters() * 4;
  if (bytes > ctx.max_bytes())
    throw tg::DataError("/config describes a model of at least " + std::to_string(bytes) +
                        " bytes of float32 weights, but the file has only " +
                        std::to_string(ctx.file_size) +
                        " bytes: the file is truncated or its /config is wrong");
}

enum class Values { Any, NonNegative };

// Reads every tensor of the table from `group` into `buffer`, after checking
// dtype and shape, and rejects NaN/Inf (and negatives for second moments).
// With buffer == nullptr the tensors are read one at a time into a scratch
// vector and dropped: their checksums are verified, their values (unused)
// are not checked, nothing is kept.
void read_tensors(const Node& group, const nn::ParameterStore& store, float* buffer, Values values,
                  const LoadContext& ctx) {
  std::vector<float> scratch;
  for (const nn::ParamInfo& p : store.table) {
    Node ds = open_dataset(group, p.name);
    require_float32(ds);
    const std::vector<int64_t> dims = dataset_dims(ds);
    if (dims != p.shape)
      throw tg::DataError("dataset " + ds.path + " has shape " + shape_string(dims) + ", expected " +
                          shape_string(p.shape) + " from /config");
    if (!buffer) {
      scratch.resize(static_cast<size_t>(p.numel));
      read_dataset(ds, H5T_NATIVE_FLOAT, scratch.data(), ctx.checksums());
      continue;
    }
    float* dst = buffer + p.offset;
    read_dataset(ds, H5T_NATIVE_FLOAT, dst, ctx.checksums());
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

// Returns true when moments were loaded into store.m and store.v. Without
// `keep` the moments are still read, to verify their checksums (every load
// verifies every dataset), but not stored.
bool read_optimizer(const Node& root, OptimizerState* o, nn::ParameterStore& store, bool keep,
                    const LoadContext& ctx) {
  if (!has_child(root, layout::kOptimizer)) return false;
  Node g = open_group(root, layout::kOptimizer);
  *o = read_optimizer_attrs(g);
  const bool has_m = has_child(g, layout::kMoment1), has_v = has_child(g, layout::kMoment2);
  if (!has_m && !has_v) return false;  // saved without moments
  if (has_m != has_v)
    throw tg::DataError("/optimizer has only one of the moment groups m and v; both or neither");
  read_tensors(open_group(g, layout::kMoment1), store, keep ? store.m.data() : nullptr, Values::Any, ctx);
  read_tensors(open_group(g, layout::kMoment2), store, keep ? store.v.data() : nullptr,
               Values::NonNegative, ctx);
  return keep;
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
  if (has_attr(g, "split") && !data::split_parse(read_string_attr(g, "split"), &spec.split))
    throw tg::DataError("/tokenizer split is not byte-class or gpt2 (Note [BPE pre-split])");

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
  read_dataset(off_ds, H5T_NATIVE_INT64, offsets.data(), ctx.checksums());
  std::string bytes(static_cast<size_t>(n_bytes), '\0');
  read_dataset(bytes_ds, H5T_NATIVE_UINT8, &bytes[0], ctx.checksums());
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
  read_dataset(merges_ds, H5T_NATIVE_INT32, spec.merges.data(), ctx.checksums());

  const std::string err = tokenizer_error(spec, vocab_size);
  if (!err.empty()) throw tg::DataError(err);
  return spec;
}

Loaded load_file(const std::string& path, bool with_optimizer) {
  LoadContext ctx;
  Handle file = open_checkpoint_file(path, &ctx);
  Node root = open_root(file.get());
  Loaded out;
  out.meta.config = read_config(root);
  check_plausible_size(out.meta.config, ctx);
  out.store = nn::parameter_store_create(out.meta.config);
  read_tensors(open_group(root, layout::kModel), out.store, out.store.values.floats(), Values::Any, ctx);
  out.has_optimizer = read_optimizer(root, &out.meta.optimizer, out.store, with_optimizer, ctx);
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
