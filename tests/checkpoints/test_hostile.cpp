// Hostile and damaged files: each is refused with one tg::DataError line that
// names the file and the problem, never a crash or an absurd allocation.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "tests/checkpoints/fixtures.h"

using namespace checkpoints_test;

namespace {

// A valid checkpoint of the tiny model in a scratch directory.
struct ValidFile {
  TempDir dir;
  std::string path = dir.file("ckpt.h5");
  nn::GPTConfig config = tiny_checkpoint_config();
  ValidFile() {
    checkpoints::Checkpoint meta = full_meta(config);
    meta.tokenizer.merges = {{1, 2}};
    checkpoints::save_checkpoint(path, meta, filled_store(config, 11));
  }
};

// The error for `path` names the file, is one line, and contains `needle`.
void require_refused(const std::string& path, const std::string& needle, bool with_optimizer = true) {
  const std::string err = load_error(path, with_optimizer);
  INFO("message: " << err);
  REQUIRE_FALSE(err.empty());
  CHECK(err.rfind("checkpoint " + path + ": ", 0) == 0);
  CHECK(err.find('\n') == std::string::npos);
  CHECK(err.find(needle) != std::string::npos);
}

const std::string kWte = "/model/transformer.wte.weight";

}  // namespace

TEST_CASE("load refuses files that are not HDF5", "[checkpoints]") {
  TempDir dir;
  require_refused(dir.file("absent.h5"), "No such file");
  require_refused(dir.path(), "is a directory");
  const std::string path = dir.file("junk.h5");
  write_bytes(path, "");
  require_refused(path, "not an HDF5 file");
  write_bytes(path, "hello, I am a text file\n");
  require_refused(path, "not an HDF5 file");
  std::string noise(5000, '\0');
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>(i * 131 + 7);
  write_bytes(path, noise);
  require_refused(path, "not an HDF5 file");
  // The signature alone, then garbage: HDF5 must fail cleanly, not us crash.
  write_bytes(path, std::string("\x89HDF\r\n\x1a\n", 8) + noise);
  REQUIRE_FALSE(load_error(path).empty());
}

TEST_CASE("load refuses a truncated checkpoint at every cut", "[checkpoints]") {
  ValidFile f;
  const std::string bytes = read_bytes(f.path);
  const std::string cut = f.dir.file("cut.h5");
  const size_t n = bytes.size();
  for (size_t len : {size_t{0}, size_t{4}, size_t{8}, size_t{40}, size_t{100}, size_t{512}, size_t{2048},
                     n / 4, n / 2, 3 * n / 4, n - 100, n - 1}) {
    INFO("cut at " << len << " of " << n);
    write_bytes(cut, bytes.substr(0, len));
    REQUIRE_FALSE(load_error(cut).empty());
  }
  write_bytes(cut, bytes.substr(0, n / 2));
  require_refused(cut, "truncated");
}

TEST_CASE("load refuses foreign HDF5 files and other format versions", "[checkpoints]") {
  ValidFile f;
  SECTION("valid HDF5 of the old default kind (superblock v0)") {
    const std::string path = f.dir.file("foreign.h5");
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    float x[3] = {1, 2, 3};
    replace_dataset(file, "weights", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {3}, x);
    H5Fclose(file);
    require_refused(path, "version-0 superblock (no checksums), so not one tapegpt wrote");
  }
  SECTION("valid checksummed HDF5, no format attribute") {
    const std::string path = f.dir.file("foreign.h5");
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
    hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    float x[3] = {1, 2, 3};
    replace_dataset(file, "weights", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {3}, x);
    H5Fclose(file);
    H5Pclose(fapl);
    require_refused(path, "not a tapegpt checkpoint (no root attribute 'format')");
  }
  SECTION("another format name") {
    edit_h5(f.path, [](hid_t file) { set_string_attr(file, "/", "format", "keras"); });
    require_refused(f.path, "format 'keras'");
  }
  SECTION("format attribute of the wrong type") {
    edit_h5(f.path, [](hid_t file) { set_int_attr(file, "/", "format", 1); });
    require_refused(f.path, "expected string");
  }
  SECTION("variable-length strings are refused (Note [Fixed-length strings])") {
    edit_h5(f.path, [](hid_t file) {
      H5Adelete(file, "format");
      hid_t type = H5Tcopy(H5T_C_S1);
      H5Tset_size(type, H5T_VARIABLE);
      hid_t space = H5Screate(H5S_SCALAR);
      hid_t a = H5Acreate2(file, "format", type, space, H5P_DEFAULT, H5P_DEFAULT);
      const char* value = "tapegpt";
      H5Awrite(a, type, &value);
      H5Aclose(a);
      H5Sclose(space);
      H5Tclose(type);
    });
    require_refused(f.path, "attribute format of / is a variable-length string");
  }
  SECTION("a newer format version") {
    edit_h5(f.path, [](hid_t file) { set_int_attr(file, "/", "format_version", 3); });
    require_refused(f.path, "format_version 3");
  }
  SECTION("fixed-length string attributes are accepted") {
    edit_h5(f.path, [](hid_t file) { set_string_attr(file, "/", "format", "tapegpt"); });
    CHECK(load_error(f.path) == "");
  }
}

TEST_CASE("load refuses model datasets that do not match /config", "[checkpoints]") {
  ValidFile f;
  const int64_t V = f.config.vocab_size, C = f.config.n_embd;
  SECTION("missing dataset") {
    edit_h5(f.path, [](hid_t file) { H5Ldelete(file, "/model/transformer.h.1.mlp.c_fc.weight", H5P_DEFAULT); });
    require_refused(f.path, "/model/transformer.h.1.mlp.c_fc.weight is missing");
  }
  SECTION("float64 instead of float32") {
    std::vector<double> x(V * C, 0.5);
    edit_h5(f.path, [&](hid_t file) {
      replace_dataset(file, kWte, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {hsize_t(V), hsize_t(C)}, x.data());
    });
    require_refused(f.path, "is float64, expected float32");
  }
  SECTION("integers instead of floats") {
    std::vector<int32_t> x(V * C, 1);
    edit_h5(f.path, [&](hid_t file) {
      replace_dataset(file, kWte, H5T_STD_I32LE, H5T_NATIVE_INT32, {hsize_t(V), hsize_t(C)}, x.data());
    });
    require_refused(f.path, "expected float32");
  }
  SECTION("wrong dimensions") {
    std::vector<float> x(V * C / 2, 0.5f);
    edit_h5(f.path, [&](hid_t file) {
      replace_dataset(file, kWte, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {hsize_t(V), hsize_t(C / 2)}, x.data());
    });
    require_refused(f.path, "has shape [11,4], expected [11,8] from /config");
  }
  SECTION("wrong rank") {
    std::vector<float> x(V * C, 0.5f);
    edit_h5(f.path, [&](hid_t file) {
      replace_dataset(file, kWte, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {hsize_t(V * C)}, x.data());
    });
    require_refused(f.path, "has shape [88]");
  }
  SECTION("a group where a dataset belongs") {
    edit_h5(f.path, [&](hid_t file) {
      H5Ldelete(file, kWte.c_str(), H5P_DEFAULT);
      H5Gclose(H5Gcreate2(file, kWte.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    });
    require_refused(f.path, "is not a dataset");
  }
  SECTION("soft and external links are refused") {
    edit_h5(f.path, [&](hid_t file) {
      H5Ldelete(file, kWte.c_str(), H5P_DEFAULT);
      H5Lcreate_soft("/model/lm_head_alias", file, kWte.c_str(), H5P_DEFAULT, H5P_DEFAULT);
    });
    require_refused(f.path, "soft or external link");
    edit_h5(f.path, [&](hid_t file) {
      H5Ldelete(file, kWte.c_str(), H5P_DEFAULT);
      H5Lcreate_external("/etc/other.h5", "/x", file, kWte.c_str(), H5P_DEFAULT, H5P_DEFAULT);
    });
    require_refused(f.path, "soft or external link");
  }
  SECTION("NaN and Inf weights") {
    std::vector<float> x(V * C, 0.5f);
    x[5] = std::numeric_limits<float>::quiet_NaN();
    edit_h5(f.path, [&](hid_t file) {
      replace_dataset(file, kWte, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {hsize_t(V), hsize_t(C)}, x.data());
    });
    require_refused(f.path, "holds NaN at element 5");
  }
  SECTION("negative second moment") {
    std::vector<float> x(V * C, -1.0f);
    edit_h5(f.path, [&](hid_t file) {
      replace_dataset(file, "/optimizer/v/transformer.wte.weight", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT,
                      {hsize_t(V), hsize_t(C)}, x.data());
    });
    require_refused(f.path, "negative second moment");
    CHECK(load_error(f.path, /*with_optimizer=*/false) == "");  // eval never reads moments
  }
  SECTION("only one moment group") {
    edit_h5(f.path, [](hid_t file) { H5Ldelete(file, "/optimizer/v", H5P_DEFAULT); });
    require_refused(f.path, "only one of the moment groups");
  }
  SECTION("extra datasets are ignored") {
    float x[2] = {1, 2};
    edit_h5(f.path, [&](hid_t file) {
      replace_dataset(file, "/model/my.extra.buffer", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {2}, x);
      replace_dataset(file, "/notes", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {2}, x);
    });
    CHECK(load_error(f.path) == "");
  }
}

TEST_CASE("load refuses bad configs before allocating", "[checkpoints]") {
  ValidFile f;
  SECTION("n_embd not divisible by n_head") {
    edit_h5(f.path, [](hid_t file) { set_int_attr(file, "/config", "n_head", 3); });
    require_refused(f.path, "/config is invalid: n_embd (8) must be divisible by n_head (3)");
  }
  SECTION("absurd dimensions in a tiny file") {
    edit_h5(f.path, [](hid_t file) {
      set_int_attr(file, "/config", "n_layer", 1024);
      set_int_attr(file, "/config", "n_embd", 65536);
      set_int_attr(file, "/config", "n_head", 1024);
      set_int_attr(file, "/config", "vocab_size", 1 << 24);
    });
    require_refused(f.path, "the file is truncated or its /config is wrong");
  }
  SECTION("out-of-range values") {
    edit_h5(f.path, [](hid_t file) { set_int_attr(file, "/config", "vocab_size", -5); });
    require_refused(f.path, "vocab_size must be between");
  }
  SECTION("bool attribute that is not 0/1") {
    edit_h5(f.path, [](hid_t file) { set_int_attr(file, "/config", "tied", 2); });
    require_refused(f.path, "must be 0 or 1");
  }
  SECTION("unknown positional encoding") {
    edit_h5(f.path, [](hid_t file) { set_string_attr(file, "/config", "pos_encoding", "alibi"); });
    require_refused(f.path, "pos_encoding is 'alibi', expected 'learned', 'sinusoidal' or 'rope'");
  }
  SECTION("unknown norm") {
    edit_h5(f.path, [](hid_t file) { set_string_attr(file, "/config", "norm", "batchnorm"); });
    require_refused(f.path, "norm is 'batchnorm', expected 'layernorm' or 'rmsnorm'");
  }
  SECTION("unknown mlp") {
    edit_h5(f.path, [](hid_t file) { set_string_attr(file, "/config", "mlp", "geglu"); });
    require_refused(f.path, "mlp is 'geglu', expected 'gelu', 'relu2' or 'swiglu'");
  }
  SECTION("rope with an odd head size") {
    edit_h5(f.path, [](hid_t file) {
      set_string_attr(file, "/config", "pos_encoding", "rope");
      set_int_attr(file, "/config", "n_head", tiny_checkpoint_config().n_embd);  // head size 1
    });
    require_refused(f.path, "rope positions need an even head size");
  }
  SECTION("missing config attribute") {
    edit_h5(f.path, [](hid_t file) { H5Adelete_by_name(file, "/config", "n_layer", H5P_DEFAULT); });
    require_refused(f.path, "/config has no attribute n_layer");
  }
  SECTION("missing config group") {
    edit_h5(f.path, [](hid_t file) { H5Ldelete(file, "/config", H5P_DEFAULT); });
    require_refused(f.path, "/config is missing");
  }
}

TEST_CASE("load refuses bad tokenizers and train state", "[checkpoints]") {
  ValidFile f;
  SECTION("merge ids out of range") {
    int32_t merges[2][2] = {{1, 2}, {3, 99}};
    edit_h5(f.path, [&](hid_t file) {
      replace_dataset(file, "/tokenizer/merges", H5T_STD_I32LE, H5T_NATIVE_INT32, {2, 2}, merges);
    });
    require_refused(f.path, "merge 1 uses token id 99, outside [0, 11)");
  }
  SECTION("negative merge id stored as int64 beyond int32") {
    int64_t merges[1][2] = {{int64_t{1} << 40, 0}};
    edit_h5(f.path, [&](hid_t file) {
      replace_dataset(file, "/tokenizer/merges", H5T_STD_I64LE, H5T_NATIVE_INT64, {1, 2}, merges);
    });
    require_refused(f.path, "outside [0, 11)");
  }
  SECTION("merges of the wrong shape") {
    int32_t merges[3] = {1, 2, 3};
    edit_h5(f.path, [&](hid_t file) {
      replace_dataset(file, "/tokenizer/merges", H5T_STD_I32LE, H5T_NATIVE_INT32, {3}, merges);
    });
    require_refused(f.path, "expected [M,2]");
  }
  SECTION("offsets not monotone") {
    int64_t offsets[12] = {0, 1, 5, 5, 4, 6, 7, 8, 9, 10, 11, 13};
    edit_h5(f.path, [&](hid_t file) {
      replace_dataset(file, "/tokenizer/token_offsets", H5T_STD_I64LE, H5T_NATIVE_INT64, {12}, offsets);
    });
    require_refused(f.path, "decreases at index 4");
  }
  SECTION("offsets beyond the bytes") {
    int64_t offsets[12] = {0, 1, 5, 5, 6, 7, 8, 9, 10, 11, 12, 1000};
    edit_h5(f.path, [&](hid_t file) {
      replace_dataset(file, "/tokenizer/token_offsets", H5T_STD_I64LE, H5T_NATIVE_INT64, {12}, offsets);
    });
    require_refused(f.path, "must start at 0 and end at");
  }
  SECTION("more tokens than vocab_size") {
    std::vector<int64_t> offsets(20);
    for (size_t i = 0; i < offsets.size(); ++i) offsets[i] = 0;
    edit_h5(f.path, [&](hid_t file) {
      replace_dataset(file, "/tokenizer/token_offsets", H5T_STD_I64LE, H5T_NATIVE_INT64, {20}, offsets.data());
    });
    require_refused(f.path, "expected between 2 and vocab_size + 1 = 12");
  }
  SECTION("huge claimed token count is refused before allocation") {
    edit_h5(f.path, [&](hid_t file) {
      H5Ldelete(file, "/tokenizer/token_bytes", H5P_DEFAULT);
      // Chunked with nothing written: the dims cost no file space at all.
      hsize_t dims = hsize_t{1} << 50, chunk = 1024;
      hid_t space = H5Screate_simple(1, &dims, nullptr);
      hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
      H5Pset_chunk(dcpl, 1, &chunk);
      H5Dclose(H5Dcreate2(file, "/tokenizer/token_bytes", H5T_STD_U8LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
      H5Pclose(dcpl);
      H5Sclose(space);
    });
    require_refused(f.path, "implausible for a file of");
  }
  SECTION("token bytes of the wrong type") {
    int32_t bytes[4] = {1, 2, 3, 4};
    edit_h5(f.path, [&](hid_t file) {
      replace_dataset(file, "/tokenizer/token_bytes", H5T_STD_I32LE, H5T_NATIVE_INT32, {4}, bytes);
    });
    require_refused(f.path, "expected uint8");
  }
  SECTION("unknown tokenizer type") {
    edit_h5(f.path, [](hid_t file) { set_string_attr(file, "/tokenizer", "type", "sentencepiece"); });
    require_refused(f.path, "type is 'sentencepiece'");
  }
  SECTION("train attribute mistyped") {
    edit_h5(f.path, [](hid_t file) { set_string_attr(file, "/train", "step", "twelve"); });
    require_refused(f.path, "attribute step of /train is a string, expected integer");
  }
  SECTION("train attribute missing") {
    edit_h5(f.path, [](hid_t file) { H5Adelete_by_name(file, "/train", "rng_state", H5P_DEFAULT); });
    require_refused(f.path, "/train has no attribute rng_state");
  }
  SECTION("rng_state of the wrong length") {
    edit_h5(f.path, [](hid_t file) { set_int_attr(file, "/train", "rng_state", 5); });
    require_refused(f.path, "holds 1 values, expected 4");
  }
  SECTION("negative step") {
    edit_h5(f.path, [](hid_t file) { set_int_attr(file, "/train", "sampler_position", -1); });
    require_refused(f.path, "is negative");
  }
}

TEST_CASE("dataset checksums: required from format_version 2, optional in version 1", "[checkpoints]") {
  ValidFile f;
  const int64_t V = f.config.vocab_size, C = f.config.n_embd;
  std::vector<float> x(static_cast<size_t>(V * C), 0.25f);
  SECTION("a version-2 dataset without a checksum is refused, naming it") {
    edit_h5(f.path, [&](hid_t file) {
      replace_dataset(file, kWte, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {hsize_t(V), hsize_t(C)}, x.data(), false);
    });
    require_refused(f.path, "dataset " + kWte + " has no checksum");
    require_refused(f.path, "dataset " + kWte + " has no checksum", false);
  }
  SECTION("a version-1 file without checksums still loads") {
    edit_h5(f.path, [&](hid_t file) {
      set_int_attr(file, "/", "format_version", 1);
      replace_dataset(file, kWte, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {hsize_t(V), hsize_t(C)}, x.data(), false);
    });
    CHECK(load_error(f.path) == "");
    const checkpoints::Loaded loaded = checkpoints::load_checkpoint(f.path);
    CHECK(loaded.store.values.floats()[loaded.store.find("transformer.wte.weight")->offset] == 0.25f);
  }
  SECTION("a flipped bit inside a tensor fails its checksum, naming the dataset") {
    // Where HDF5 stored the dataset's (single, small) chunk, then one bit of
    // its middle byte flipped.
    haddr_t offset = 0;
    hsize_t size = 0;
    edit_h5(f.path, [&](hid_t file) {
      hid_t ds = H5Dopen2(file, kWte.c_str(), H5P_DEFAULT);
      hid_t space = H5Dget_space(ds);
      hsize_t n_chunks = 0;
      REQUIRE(H5Dget_num_chunks(ds, space, &n_chunks) >= 0);
      REQUIRE(n_chunks >= 1);
      REQUIRE(H5Dget_chunk_info(ds, space, n_chunks / 2, nullptr, nullptr, &offset, &size) >= 0);
      H5Sclose(space);
      H5Dclose(ds);
    });
    std::string bytes = read_bytes(f.path);
    REQUIRE(offset + size <= bytes.size());
    bytes[offset + size / 2] = static_cast<char>(bytes[offset + size / 2] ^ 0x04);
    write_bytes(f.path, bytes);
    require_refused(f.path, "dataset " + kWte + " fails its Fletcher32 checksum");
    require_refused(f.path, "dataset " + kWte + " fails its Fletcher32 checksum", false);
    const checkpoints::Inspection in = checkpoints::inspect_checkpoint(f.path);
    int failed = 0;
    for (const checkpoints::DatasetReport& d : in.datasets) {
      if (d.error.empty()) continue;
      ++failed;
      CHECK(d.path == kWte);
    }
    CHECK(failed == 1);
  }
}
