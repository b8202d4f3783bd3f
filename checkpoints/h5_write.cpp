// Writing helpers over the HDF5 C API (see h5_write.h).
#include "checkpoints/h5_write.h"

#include "autograd/base/errors.h"

namespace checkpoints {

Node create_group(const Node& parent, const std::string& name, bool track_attr_order) {
  const std::string path = child_path(parent, name);
  Handle gcpl = checked(H5Pcreate(H5P_GROUP_CREATE), H5Pclose, "cannot create group " + path);
  if (track_attr_order)
    check_status(H5Pset_attr_creation_order(gcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
                 "cannot create group " + path);
  Handle group = checked(H5Gcreate2(parent.id(), name.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT),
                         H5Gclose, "cannot create group " + path);
  return Node{std::move(group), path};
}

namespace {

// Creates attribute `name` on `obj` with the given file type and dataspace,
// and writes `buf` (in mem_type) to it.
void write_attr(const Node& obj, const std::string& name, hid_t file_type, hid_t mem_type,
                hid_t space, const void* buf) {
  const std::string what = "cannot write attribute " + name + " of " + obj.path;
  Handle attr = checked(H5Acreate2(obj.id(), name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT),
                        H5Aclose, what);
  check_status(H5Awrite(attr.get(), mem_type, buf), what);
  check_status(attr.close(), what);
}

Handle scalar_space(const std::string& what) {
  return checked(H5Screate(H5S_SCALAR), H5Sclose, what);
}

}  // namespace

void write_int_attr(const Node& obj, const std::string& name, int64_t value) {
  Handle space = scalar_space("cannot write attribute " + name);
  write_attr(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, space.get(), &value);
}

void write_uint_attr(const Node& obj, const std::string& name, uint64_t value) {
  Handle space = scalar_space("cannot write attribute " + name);
  write_attr(obj, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, space.get(), &value);
}

void write_uint_array_attr(const Node& obj, const std::string& name,
                           const std::vector<uint64_t>& values) {
  const hsize_t n = values.size();
  Handle space = checked(H5Screate_simple(1, &n, nullptr), H5Sclose, "cannot write attribute " + name);
  write_attr(obj, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, space.get(), values.data());
}

void write_double_attr(const Node& obj, const std::string& name, double value) {
  Handle space = scalar_space("cannot write attribute " + name);
  write_attr(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, space.get(), &value);
}

void write_string_attr(const Node& obj, const std::string& name, const std::string& value) {
  const std::string what = "cannot write attribute " + name + " of " + obj.path;
  // Fixed-length, NUL-padded, stored inside the attribute itself: see Note
  // [Fixed-length strings] in h5_read.cpp. HDF5 has no zero-size string
  // type, so "" is stored as one pad byte.
  Handle type = checked(H5Tcopy(H5T_C_S1), H5Tclose, what);
  check_status(H5Tset_size(type.get(), value.empty() ? 1 : value.size()), what);
  check_status(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), what);
  check_status(H5Tset_cset(type.get(), H5T_CSET_UTF8), what);
  Handle space = scalar_space(what);
  const std::string padded = value.empty() ? std::string(1, '\0') : value;
  write_attr(obj, name, type.get(), type.get(), space.get(), padded.data());
}

namespace {

// Note [Dataset checksums]: every dataset with data is chunked and carries
// HDF5's Fletcher32 filter, one checksum per chunk, which HDF5 verifies on
// every read of that chunk (format_version 2). Chunks of about 1 MiB keep
// the per-chunk overhead negligible and let h5py locate a chunk's bytes.
// Rows are never split: a chunk is a run of whole rows along dimension 0,
// and the rows are spread evenly over the chunks, since HDF5 stores a
// partial last chunk at full size (3072 rows in chunks of 341 would waste
// 10% of the file; in 10 chunks of 308, 0.3%).
std::vector<hsize_t> chunk_dims(const std::vector<hsize_t>& dims) {
  constexpr hsize_t kTargetElements = hsize_t{1} << 18;
  std::vector<hsize_t> chunk = dims;
  hsize_t row = 1;
  for (size_t i = 1; i < dims.size(); ++i) row *= dims[i];
  const hsize_t target_rows = row >= kTargetElements ? 1 : kTargetElements / row;
  const hsize_t n_chunks = (dims[0] + target_rows - 1) / target_rows;
  chunk[0] = (dims[0] + n_chunks - 1) / n_chunks;
  return chunk;
}

}  // namespace

void write_dataset(const Node& parent, const std::string& name, hid_t file_type, hid_t mem_type,
                   const std::vector<int64_t>& dims, const void* data) {
  const std::string path = child_path(parent, name);
  const std::string what = "cannot write dataset " + path;
  std::vector<hsize_t> hdims(dims.begin(), dims.end());
  hsize_t numel = 1;
  for (hsize_t d : hdims) numel *= d;
  Handle space = checked(H5Screate_simple(static_cast<int>(hdims.size()), hdims.data(), nullptr),
                         H5Sclose, what);
  // Never pre-filled: the data written next is the only write, so a 1.5 GB
  // save costs one pass over the disk. An empty dataset (no merges) has no
  // chunk to checksum and stays contiguous.
  Handle dcpl = checked(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, what);
  check_status(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), what);
  if (numel > 0) {
    const std::vector<hsize_t> chunk = chunk_dims(hdims);
    check_status(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()), what);
    check_status(H5Pset_fletcher32(dcpl.get()), what);
  }
  Handle ds = checked(H5Dcreate2(parent.id(), name.c_str(), file_type, space.get(), H5P_DEFAULT,
                                 dcpl.get(), H5P_DEFAULT),
                      H5Dclose, what);
  if (numel > 0) check_status(H5Dwrite(ds.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), what);
  check_status(ds.close(), what);
}

}  // namespace checkpoints
