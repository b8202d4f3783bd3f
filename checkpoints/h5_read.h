// Reading helpers for untrusted files: every lookup checks that the object
// exists, is what we expect and is stored inside this file, and every failure
// is a tg::DataError naming the object (the caller adds the file name).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "checkpoints/h5_handle.h"

namespace checkpoints {

Node open_root(hid_t file);

// True when `parent` has a link called `name` (of any kind).
bool has_child(const Node& parent, const std::string& name);
// Opens a group / dataset reached by a hard link. Soft and external links are
// refused: a checkpoint is one self-contained file, and an external link in a
// hostile file would make us open another file on disk.
Node open_group(const Node& parent, const std::string& name);
// Also refuses datasets whose data lives outside the file (external storage,
// virtual datasets) for the same reason.
Node open_dataset(const Node& parent, const std::string& name);

bool has_attr(const Node& obj, const std::string& name);
// Each reader requires the attribute to exist, hold exactly one value (or
// `n` for the array), and be of a compatible class: integer for ints,
// float or integer for doubles, string for strings.
int64_t read_int_attr(const Node& obj, const std::string& name);
uint64_t read_uint_attr(const Node& obj, const std::string& name);
std::vector<uint64_t> read_uint_array_attr(const Node& obj, const std::string& name, int64_t n);
// 0/1 as any integer type, or an h5py bool (an enum of FALSE/TRUE).
bool read_bool_attr(const Node& obj, const std::string& name);
double read_double_attr(const Node& obj, const std::string& name);
std::string read_string_attr(const Node& obj, const std::string& name);

// All attributes of a group with their natural types, in creation order when
// the file tracked it, else in name order.
using AttrValue = std::variant<int64_t, double, std::string>;
std::vector<std::pair<std::string, AttrValue>> read_all_attrs(const Node& group);

// A dataset's dimensions ({} for a scalar); null dataspaces are refused.
std::vector<int64_t> dataset_dims(const Node& ds);
// "[65,128]"
std::string shape_string(const std::vector<int64_t>& dims);
// Float32 (little- or big-endian IEEE) or an error naming what it is instead.
void require_float32(const Node& ds);
// An integer type of `bytes` bytes (0: any size); unsigned_only for raw bytes.
void require_integer(const Node& ds, size_t bytes, bool unsigned_only);
// True when the dataset carries HDF5's Fletcher32 filter (Note [Dataset
// checksums] in h5_write.cpp).
bool has_checksum(const Node& ds);
// Reads the whole dataset into `out`, converting to mem_type; a no-op for
// zero elements. HDF5 verifies a checksummed dataset chunk by chunk as it
// reads: a mismatch is one tg::DataError naming the dataset. With
// require_checksum (format_version >= 2) a dataset holding data but no
// checksum is refused too.
void read_dataset(const Node& ds, hid_t mem_type, void* out, bool require_checksum = false);

}  // namespace checkpoints
