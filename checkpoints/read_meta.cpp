// Opening a checkpoint and reading its metadata (see read_meta.h).
#include "checkpoints/read_meta.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "autograd/base/errors.h"
#include "checkpoints/h5_read.h"
#include "checkpoints/layout.h"

namespace checkpoints {

int64_t LoadContext::max_bytes() const { return file_size * layout::kMaxInflation + 4096; }

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
  // Note [Model choices] in nn/config.h. pos_encoding has always been
  // written; a checkpoint from before any other one (gelu, norm, mlp) has
  // the default (tanh GELU, LayerNorm, GELU MLP), as GPTConfig{} does.
  for (const nn::ModelChoice& row : nn::model_choices()) {
    if (!has_attr(g, row.key) && std::string(row.key) != "pos_encoding") continue;
    const std::string name = read_string_attr(g, row.key);
    if (!nn::choice_parse(row, name, &c))
      throw tg::DataError("/config " + std::string(row.key) + " is '" + name + "', expected " +
                          nn::choice_list(row));
  }
  const std::string err = nn::config_error(c);
  if (!err.empty()) throw tg::DataError("/config is invalid: " + err);
  return c;
}

int64_t read_count_attr(const Node& g, const std::string& name) {
  const int64_t v = read_int_attr(g, name);
  if (v < 0) throw tg::DataError("attribute " + name + " of " + g.path + " is negative");
  return v;
}

OptimizerState read_optimizer_attrs(const Node& g) {
  OptimizerState o;
  if (has_attr(g, "name")) o.name = read_string_attr(g, "name");  // absent before Muon: AdamW
  o.step = read_count_attr(g, "step");
  o.lr = read_double_attr(g, "lr");
  o.beta1 = read_double_attr(g, "beta1");
  o.beta2 = read_double_attr(g, "beta2");
  o.eps = read_double_attr(g, "eps");
  o.weight_decay = read_double_attr(g, "weight_decay");
  return o;
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
  if (has_attr(g, "train_seconds")) {  // optional: older files have none
    t.train_seconds = read_double_attr(g, "train_seconds");
    if (!(t.train_seconds >= 0 && std::isfinite(t.train_seconds)))
      throw tg::DataError("attribute train_seconds of " + g.path + " is not a finite number of seconds");
  }
  t.data_hash = read_string_attr(g, "data_hash");
  t.run_dir = read_string_attr(g, "run_dir");
  if (has_attr(g, "run_id")) t.run_id = read_string_attr(g, "run_id");  // format_version 2
  if (has_child(g, layout::kFlags))  // optional: a converted model has none
    for (auto& [name, value] : read_all_attrs(open_group(g, layout::kFlags)))
      t.flags.push_back(Flag{name, value});
  return t;
}

namespace {

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

}  // namespace

Handle open_checkpoint_file(const std::string& path, LoadContext* ctx) {
  Handle file = open_file(path, ctx);
  Node root = open_root(file.get());
  if (!has_attr(root, "format"))
    throw tg::DataError("is an HDF5 file but not a tapegpt checkpoint (no root attribute 'format')");
  const std::string format = read_string_attr(root, "format");
  if (format != layout::kFormat)
    throw tg::DataError("is an HDF5 file in format '" + format + "', not a tapegpt checkpoint");
  const int64_t version = read_int_attr(root, "format_version");
  if (version < 1 || version > kFormatVersion)
    throw tg::DataError("has format_version " + std::to_string(version) + ", but this tapegpt reads versions 1 to " +
                        std::to_string(kFormatVersion) + ": load it with the tapegpt version that wrote it");
  ctx->format_version = version;
  return file;
}

}  // namespace checkpoints
