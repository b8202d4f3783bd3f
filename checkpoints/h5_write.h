// Writing helpers: groups, scalar attributes and checksummed datasets, each
// throwing tg::DataError with the HDF5 reason when the write fails.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoints/h5_handle.h"

namespace checkpoints {

// track_attr_order: remember attribute creation order, so /train/flags reads
// back in the order the trainer wrote them.
Node create_group(const Node& parent, const std::string& name, bool track_attr_order = false);

void write_int_attr(const Node& obj, const std::string& name, int64_t value);
void write_uint_attr(const Node& obj, const std::string& name, uint64_t value);
void write_uint_array_attr(const Node& obj, const std::string& name,
                           const std::vector<uint64_t>& values);
void write_double_attr(const Node& obj, const std::string& name, double value);
// Fixed-length UTF-8, NUL-padded (h5py reads it as bytes). The reader strips
// trailing NULs, so the value must hold no NUL (save checks).
void write_string_attr(const Node& obj, const std::string& name, const std::string& value);

// One chunked dataset of `dims` with a Fletcher32 checksum per chunk (Note
// [Dataset checksums] in h5_write.cpp), written straight from `data`
// (converted from mem_type to file_type by HDF5, a no-op for native
// little-endian floats). Zero-element datasets are created contiguous and
// left unwritten, so empty merges keep their [0, 2] shape.
void write_dataset(const Node& parent, const std::string& name, hid_t file_type, hid_t mem_type,
                   const std::vector<int64_t>& dims, const void* data);

}  // namespace checkpoints
