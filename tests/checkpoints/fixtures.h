// Test fixtures for checkpoints: a tiny model with deterministic, awkward
// values, and HDF5 helpers to damage a valid file. (Scratch directories and
// file bytes: tests/support/files.h.)
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <functional>
#include <string>

#include "checkpoints/checkpoint.h"
#include "tests/support/files.h"

namespace checkpoints_test {

using testing::read_bytes;
using testing::TempDir;
using testing::write_bytes;

// testing::tiny_config() with C=8 (smaller files; test_hostile's messages
// name it) and dropout 0.1, so the config round trip sees a non-default value.
nn::GPTConfig tiny_checkpoint_config();
// A store for `config` with params, m and v filled from `seed`, including
// -0.0, subnormals and extreme magnitudes (bit-exactness, not just equality);
// v is non-negative as a real second moment is.
nn::ParameterStore filled_store(const nn::GPTConfig& config, uint64_t seed);
// Metadata exercising every field: rng_state with high bits set, flags of all
// three types, tokens with NUL and 0xFF bytes and an empty token, no merges.
checkpoints::Checkpoint full_meta(const nn::GPTConfig& config);

// Bitwise comparison of every table entry of two stores' chosen buffer.
enum class Buffer { Params, M, V };
bool same_bits(const nn::ParameterStore& a, const nn::ParameterStore& b, Buffer which);
bool all_zero(const nn::ParameterStore& s, Buffer which);

// Opens `path` read-write with HDF5 and runs `edit` on the file id.
void edit_h5(const std::string& path, const std::function<void(hid_t file)>& edit);
// Replaces dataset `path_in_file` with one of `type` and `dims`, filled from
// `data` (given in mem_type); with `checksum`, chunked with Fletcher32 as
// tapegpt writes it (format_version 2), else contiguous (version 1).
void replace_dataset(hid_t file, const std::string& path_in_file, hid_t file_type, hid_t mem_type,
                     const std::vector<hsize_t>& dims, const void* data, bool checksum = true);
// Replaces attribute `name` of object `obj_path` with an int64 / string value.
void set_int_attr(hid_t file, const std::string& obj_path, const std::string& name, int64_t value);
void set_string_attr(hid_t file, const std::string& obj_path, const std::string& name,
                     const std::string& value);

// Runs load_checkpoint and returns the DataError message, or "" when it
// loaded (the caller REQUIREs a non-empty message).
std::string load_error(const std::string& path, bool with_optimizer = true);

}  // namespace checkpoints_test
