// Test fixtures for checkpoints (see fixtures.h).
#include "tests/checkpoints/fixtures.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "autograd/base/errors.h"
#include "autograd/base/rng.h"
#include "tests/support/bits.h"
#include "tests/support/tiny_config.h"

namespace checkpoints_test {

nn::GPTConfig tiny_checkpoint_config() {
  nn::GPTConfig c = testing::tiny_config();
  c.n_embd = 8;
  c.dropout = 0.1f;
  return c;
}

namespace {

float awkward_float(tg::Rng& rng, int64_t i) {
  switch (i % 17) {
    case 0: return -0.0f;
    case 1: return std::numeric_limits<float>::denorm_min();
    case 2: return -std::numeric_limits<float>::max();
    case 3: return 1e-30f;
    default: return static_cast<float>(rng.normal());
  }
}

const float* buffer_of(const nn::ParameterStore& s, Buffer which) {
  return which == Buffer::Params ? s.values.floats() : which == Buffer::M ? s.m.data() : s.v.data();
}

}  // namespace

nn::ParameterStore filled_store(const nn::GPTConfig& config, uint64_t seed) {
  nn::ParameterStore s = nn::parameter_store_create(config);
  tg::Rng rng(seed);
  for (const nn::ParamInfo& p : s.table)
    for (int64_t i = 0; i < p.numel; ++i) {
      s.values.floats()[p.offset + i] = awkward_float(rng, i);
      s.m[p.offset + i] = awkward_float(rng, i + 5);
      s.v[p.offset + i] = std::fabs(awkward_float(rng, i + 9));
    }
  return s;
}

checkpoints::Checkpoint full_meta(const nn::GPTConfig& config) {
  checkpoints::Checkpoint m;
  m.config = config;
  m.train.step = 1234;
  m.train.tokens_seen = int64_t{1} << 40;
  m.train.train_seconds = 123.456;
  m.train.seed = 0xFFFFFFFFFFFFFFFFULL;
  m.train.rng_state = {0x8000000000000001ULL, 2, 0xDEADBEEFCAFEF00DULL, 0};
  m.train.sampler_position = 77;
  m.train.best_val_loss = std::numeric_limits<double>::infinity();
  m.train.data_hash = "fnv1a:0123456789abcdef";
  m.train.run_dir = "runs/tiny ünïcode";
  m.train.flags = {{"lr", 3e-4}, {"batch_size", int64_t{12}}, {"dataset", std::string("shakespeare")},
                   {"alpha_last", -1.5}, {"empty", std::string()}, {"big", int64_t{-(int64_t{1} << 62)}}};
  m.optimizer.step = 1234;
  m.optimizer.lr = 2.5e-4;
  m.optimizer.beta1 = 0.9;
  m.optimizer.beta2 = 0.99;
  m.optimizer.eps = 1e-8;
  m.optimizer.weight_decay = 0.1;
  m.tokenizer.type = "char";
  for (int64_t i = 0; i < config.vocab_size; ++i) m.tokenizer.tokens.push_back(std::string(1, char('a' + i)));
  m.tokenizer.tokens[0] = std::string("\0", 1);
  m.tokenizer.tokens[1] = std::string("x\0y\xff", 4);
  m.tokenizer.tokens[2] = "";
  return m;
}

bool same_bits(const nn::ParameterStore& a, const nn::ParameterStore& b, Buffer which) {
  if (a.table.size() != b.table.size()) return false;
  for (size_t k = 0; k < a.table.size(); ++k) {
    const nn::ParamInfo& p = a.table[k];
    const nn::ParamInfo& q = b.table[k];
    if (p.name != q.name || p.shape != q.shape) return false;
    if (!testing::same_bits(buffer_of(a, which) + p.offset, buffer_of(b, which) + q.offset, p.numel))
      return false;
  }
  return true;
}

bool all_zero(const nn::ParameterStore& s, Buffer which) {
  const float* x = buffer_of(s, which);
  for (int64_t i = 0; i < s.total; ++i)
    if (x[i] != 0.0f) return false;
  return true;
}

namespace {

void ok(herr_t status, const std::string& what) {
  if (status < 0) throw std::runtime_error("test HDF5 edit failed: " + what);
}

}  // namespace

void edit_h5(const std::string& path, const std::function<void(hid_t file)>& edit) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) throw std::runtime_error("test cannot open " + path);
  edit(file);
  ok(H5Fclose(file), "close");
}

void replace_dataset(hid_t file, const std::string& path_in_file, hid_t file_type, hid_t mem_type,
                     const std::vector<hsize_t>& dims, const void* data, bool checksum) {
  if (H5Lexists(file, path_in_file.c_str(), H5P_DEFAULT) > 0)
    ok(H5Ldelete(file, path_in_file.c_str(), H5P_DEFAULT), "delete " + path_in_file);
  hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  hsize_t n = 1;
  for (hsize_t d : dims) n *= d;
  // Like tapegpt's writer: one chunk with a Fletcher32 checksum.
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (checksum && n > 0) {
    ok(H5Pset_chunk(dcpl, static_cast<int>(dims.size()), dims.data()), "chunk " + path_in_file);
    ok(H5Pset_fletcher32(dcpl), "fletcher32 " + path_in_file);
  }
  hid_t ds = H5Dcreate2(file, path_in_file.c_str(), file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  ok(ds, "create " + path_in_file);
  if (n > 0) ok(H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "write " + path_in_file);
  H5Dclose(ds);
  H5Sclose(space);
}

void set_int_attr(hid_t file, const std::string& obj_path, const std::string& name, int64_t value) {
  if (H5Aexists_by_name(file, obj_path.c_str(), name.c_str(), H5P_DEFAULT) > 0)
    ok(H5Adelete_by_name(file, obj_path.c_str(), name.c_str(), H5P_DEFAULT), "delete attr " + name);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate_by_name(file, obj_path.c_str(), name.c_str(), H5T_STD_I64LE, space, H5P_DEFAULT,
                              H5P_DEFAULT, H5P_DEFAULT);
  ok(a, "create attr " + name);
  ok(H5Awrite(a, H5T_NATIVE_INT64, &value), "write attr " + name);
  H5Aclose(a);
  H5Sclose(space);
}

void set_string_attr(hid_t file, const std::string& obj_path, const std::string& name,
                     const std::string& value) {
  if (H5Aexists_by_name(file, obj_path.c_str(), name.c_str(), H5P_DEFAULT) > 0)
    ok(H5Adelete_by_name(file, obj_path.c_str(), name.c_str(), H5P_DEFAULT), "delete attr " + name);
  // Fixed-length here (the writer uses variable-length): the reader takes both.
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, value.size() + 1);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate_by_name(file, obj_path.c_str(), name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT,
                              H5P_DEFAULT);
  ok(a, "create attr " + name);
  ok(H5Awrite(a, type, value.c_str()), "write attr " + name);
  H5Aclose(a);
  H5Sclose(space);
  H5Tclose(type);
}

std::string load_error(const std::string& path, bool with_optimizer) {
  try {
    checkpoints::load_checkpoint(path, with_optimizer);
  } catch (const tg::DataError& e) {
    return e.what();
  }
  return "";
}

}  // namespace checkpoints_test
