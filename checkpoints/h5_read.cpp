// Reading helpers over the HDF5 C API, defensive against hostile files.
#include "checkpoints/h5_read.h"

#include "autograd/base/errors.h"

namespace checkpoints {

namespace {

// A fixed-length string attribute longer than this is not one we wrote.
constexpr size_t kMaxFixedString = size_t{1} << 20;

// "an integer", "a string", ... for messages.
const char* class_name(H5T_class_t c) {
  switch (c) {
    case H5T_INTEGER: return "an integer";
    case H5T_FLOAT: return "a float";
    case H5T_STRING: return "a string";
    case H5T_COMPOUND: return "a compound";
    case H5T_ENUM: return "an enum";
    case H5T_ARRAY: return "an array";
    case H5T_VLEN: return "a variable-length sequence";
    case H5T_OPAQUE: return "an opaque value";
    case H5T_BITFIELD: return "a bitfield";
    case H5T_REFERENCE: return "a reference";
    case H5T_TIME: return "a time";
    default: return "of an unknown type";
  }
}

std::string attr_label(const Node& obj, const std::string& name) {
  return "attribute " + name + " of " + obj.path;
}

// An opened attribute with its type, class and element count.
struct Attr {
  Handle attr, type;
  H5T_class_t cls = H5T_NO_CLASS;
  hssize_t npoints = 0;
};

Attr open_attr(const Node& obj, const std::string& name) {
  const std::string label = attr_label(obj, name);
  htri_t exists = H5Aexists(obj.id(), name.c_str());
  if (exists < 0) throw_h5_error("cannot read " + label);
  if (exists == 0) throw tg::DataError(obj.path + " has no attribute " + name);
  Attr a;
  a.attr = checked(H5Aopen(obj.id(), name.c_str(), H5P_DEFAULT), H5Aclose, "cannot open " + label);
  a.type = checked(H5Aget_type(a.attr.get()), H5Tclose, "cannot read the type of " + label);
  a.cls = H5Tget_class(a.type.get());
  Handle space = checked(H5Aget_space(a.attr.get()), H5Sclose, "cannot read the shape of " + label);
  a.npoints = H5Sget_simple_extent_npoints(space.get());
  if (a.npoints < 0) throw_h5_error("cannot read the shape of " + label);
  return a;
}

void require_one(const Attr& a, const std::string& label) {
  if (a.npoints != 1)
    throw tg::DataError(label + " holds " + std::to_string(a.npoints) + " values, expected one");
}

void require_class(const Attr& a, const std::string& label, const char* want, bool ok) {
  if (!ok)
    throw tg::DataError(label + " is " + class_name(a.cls) + ", expected " + want);
}

// Note [Fixed-length strings]: a variable-length string is stored in HDF5's
// global heap, and HDF5 1.10 trusts the lengths it finds there: fuzzing a
// checkpoint with variable-length string attributes found a heap overflow in
// H5HG_read. Fixed-length strings live inside the attribute message, which
// HDF5 bounds-checks, so tapegpt writes only those and refuses the others
// (h5py: write numpy.bytes_ values, not str).
std::string read_string(const Attr& a, const std::string& label) {
  const std::string what = "cannot read " + label;
  htri_t is_var = H5Tis_variable_str(a.type.get());
  if (is_var < 0) throw_h5_error(what);
  if (is_var > 0)
    throw tg::DataError(label + " is a variable-length string, which tapegpt does not read from "
                        "untrusted files; store it fixed-length (h5py: numpy.bytes_)");
  const size_t size = H5Tget_size(a.type.get());
  if (size == 0 || size > kMaxFixedString)
    throw tg::DataError(label + " has an implausible string size " + std::to_string(size));
  std::string buf(size, '\0');
  check_status(H5Aread(a.attr.get(), a.type.get(), &buf[0]), what);
  // Fixed-length strings are padded: cut at the terminator or strip the pad.
  if (H5Tget_strpad(a.type.get()) == H5T_STR_SPACEPAD) {
    while (!buf.empty() && buf.back() == ' ') buf.pop_back();
  } else {
    buf.resize(buf.find('\0') == std::string::npos ? buf.size() : buf.find('\0'));
  }
  return buf;
}

}  // namespace

namespace {

// Version of the object header of `name` in `loc` ("." for loc itself), read
// without decoding any of its messages.
unsigned header_version(hid_t loc, const char* name, const std::string& path) {
#if H5_VERSION_GE(1, 12, 0)
  H5O_native_info_t info;
  check_status(H5Oget_native_info_by_name(loc, name, &info, H5O_NATIVE_INFO_HDR, H5P_DEFAULT),
               "cannot read the object header of " + path);
#else
  H5O_info_t info;
  check_status(H5Oget_info_by_name2(loc, name, &info, H5O_INFO_HDR, H5P_DEFAULT),
               "cannot read the object header of " + path);
#endif
  return info.hdr.version;
}

// Note [Checksummed metadata]: HDF5 1.10 does not survive arbitrary damage
// to its version-1 structures (fuzzing found overflows decoding attribute
// messages). Version-2 object headers and superblocks carry checksums that
// HDF5 verifies before decoding anything, so damage becomes a clean error.
// We write only those (libver bounds v1.8..latest) and refuse an object
// whose header is older before touching its messages.
void require_checksummed(hid_t loc, const char* name, const std::string& path) {
  const unsigned version = header_version(loc, name, path);
  if (version < 2)
    throw tg::DataError(path + " has a version-" + std::to_string(version) +
                        " object header without checksums, which tapegpt does not read; "
                        "re-save the file with tapegpt (h5py: libver=('v108', 'latest'))");
}

}  // namespace

Node open_root(hid_t file) {
  require_checksummed(file, "/", "/");
  return Node{checked(H5Gopen2(file, "/", H5P_DEFAULT), H5Gclose, "cannot open the root group"), "/"};
}

bool has_child(const Node& parent, const std::string& name) {
  htri_t exists = H5Lexists(parent.id(), name.c_str(), H5P_DEFAULT);
  if (exists < 0) throw_h5_error("cannot look up " + child_path(parent, name));
  return exists > 0;
}

namespace {

// Opens `name` as an object after checking it is a hard link; returns the
// handle and its identifier type (group, dataset, named datatype).
Node open_object(const Node& parent, const std::string& name, const char* want) {
  const std::string path = child_path(parent, name);
  if (!has_child(parent, name)) throw tg::DataError(path + " is missing");
  H5L_info_t info;
  check_status(H5Lget_info(parent.id(), name.c_str(), &info, H5P_DEFAULT), "cannot look up " + path);
  if (info.type != H5L_TYPE_HARD)
    throw tg::DataError(path + " is a soft or external link, expected a " + std::string(want) +
                        " stored in this file");
  require_checksummed(parent.id(), name.c_str(), path);
  return Node{checked(H5Oopen(parent.id(), name.c_str(), H5P_DEFAULT), H5Oclose, "cannot open " + path),
              path};
}

}  // namespace

Node open_group(const Node& parent, const std::string& name) {
  Node node = open_object(parent, name, "group");
  if (H5Iget_type(node.id()) != H5I_GROUP) throw tg::DataError(node.path + " is not a group");
  return node;
}

Node open_dataset(const Node& parent, const std::string& name) {
  Node node = open_object(parent, name, "dataset");
  if (H5Iget_type(node.id()) != H5I_DATASET) throw tg::DataError(node.path + " is not a dataset");
  Handle dcpl = checked(H5Dget_create_plist(node.id()), H5Pclose, "cannot inspect " + node.path);
  int n_external = H5Pget_external_count(dcpl.get());
  H5D_layout_t layout = H5Pget_layout(dcpl.get());
  if (n_external < 0 || layout < 0) throw_h5_error("cannot inspect " + node.path);
  if (n_external > 0 || layout == H5D_VIRTUAL)
    throw tg::DataError(node.path + " keeps its data outside this file (external or virtual "
                        "storage); re-save it as a plain dataset");
  return node;
}

bool has_attr(const Node& obj, const std::string& name) {
  htri_t exists = H5Aexists(obj.id(), name.c_str());
  if (exists < 0) throw_h5_error("cannot read " + attr_label(obj, name));
  return exists > 0;
}

int64_t read_int_attr(const Node& obj, const std::string& name) {
  const std::string label = attr_label(obj, name);
  Attr a = open_attr(obj, name);
  require_one(a, label);
  require_class(a, label, "integer", a.cls == H5T_INTEGER);
  int64_t v = 0;
  check_status(H5Aread(a.attr.get(), H5T_NATIVE_INT64, &v), "cannot read " + label);
  return v;
}

uint64_t read_uint_attr(const Node& obj, const std::string& name) {
  return read_uint_array_attr(obj, name, 1)[0];
}

std::vector<uint64_t> read_uint_array_attr(const Node& obj, const std::string& name, int64_t n) {
  const std::string label = attr_label(obj, name);
  Attr a = open_attr(obj, name);
  if (a.npoints != n)
    throw tg::DataError(label + " holds " + std::to_string(a.npoints) + " values, expected " +
                        std::to_string(n));
  require_class(a, label, "integer", a.cls == H5T_INTEGER);
  std::vector<uint64_t> v(static_cast<size_t>(n));
  check_status(H5Aread(a.attr.get(), H5T_NATIVE_UINT64, v.data()), "cannot read " + label);
  return v;
}

bool read_bool_attr(const Node& obj, const std::string& name) {
  const std::string label = attr_label(obj, name);
  Attr a = open_attr(obj, name);
  require_one(a, label);
  require_class(a, label, "integer 0/1 or bool", a.cls == H5T_INTEGER || a.cls == H5T_ENUM);
  int64_t v = -1;
  if (a.cls == H5T_INTEGER) {
    check_status(H5Aread(a.attr.get(), H5T_NATIVE_INT64, &v), "cannot read " + label);
  } else {
    // HDF5 converts no enum to an integer, so read the enum as itself and
    // look its value's name up: h5py writes numpy bools as FALSE/TRUE.
    Handle native = checked(H5Tget_native_type(a.type.get(), H5T_DIR_DEFAULT), H5Tclose,
                            "cannot read " + label);
    unsigned char raw[16] = {0};
    if (H5Tget_size(native.get()) > sizeof raw) throw tg::DataError(label + " is an unsupported enum");
    check_status(H5Aread(a.attr.get(), native.get(), raw), "cannot read " + label);
    char member[16] = {0};
    if (H5Tenum_nameof(native.get(), raw, member, sizeof member) >= 0) {
      if (std::string(member) == "FALSE") v = 0;
      if (std::string(member) == "TRUE") v = 1;
    }
    H5Eclear2(H5E_DEFAULT);
  }
  if (v != 0 && v != 1) throw tg::DataError(label + " must be 0 or 1 (false or true)");
  return v == 1;
}

double read_double_attr(const Node& obj, const std::string& name) {
  const std::string label = attr_label(obj, name);
  Attr a = open_attr(obj, name);
  require_one(a, label);
  require_class(a, label, "float", a.cls == H5T_FLOAT || a.cls == H5T_INTEGER);
  double v = 0;
  check_status(H5Aread(a.attr.get(), H5T_NATIVE_DOUBLE, &v), "cannot read " + label);
  return v;
}

std::string read_string_attr(const Node& obj, const std::string& name) {
  const std::string label = attr_label(obj, name);
  Attr a = open_attr(obj, name);
  require_one(a, label);
  require_class(a, label, "string", a.cls == H5T_STRING);
  return read_string(a, label);
}

namespace {

herr_t collect_name(hid_t, const char* name, const H5A_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}

}  // namespace

std::vector<std::pair<std::string, AttrValue>> read_all_attrs(const Node& group) {
  const std::string what = "cannot list the attributes of " + group.path;
  Handle gcpl = checked(H5Gget_create_plist(group.id()), H5Pclose, what);
  unsigned order_flags = 0;
  check_status(H5Pget_attr_creation_order(gcpl.get(), &order_flags), what);
  const H5_index_t index = (order_flags & H5P_CRT_ORDER_TRACKED) ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
  std::vector<std::string> names;
  hsize_t pos = 0;
  check_status(H5Aiterate2(group.id(), index, H5_ITER_INC, &pos, collect_name, &names), what);

  std::vector<std::pair<std::string, AttrValue>> out;
  for (const std::string& name : names) {
    const std::string label = attr_label(group, name);
    Attr a = open_attr(group, name);
    require_one(a, label);
    if (a.cls == H5T_INTEGER) {
      int64_t v = 0;
      check_status(H5Aread(a.attr.get(), H5T_NATIVE_INT64, &v), "cannot read " + label);
      out.emplace_back(name, v);
    } else if (a.cls == H5T_FLOAT) {
      double v = 0;
      check_status(H5Aread(a.attr.get(), H5T_NATIVE_DOUBLE, &v), "cannot read " + label);
      out.emplace_back(name, v);
    } else if (a.cls == H5T_STRING) {
      out.emplace_back(name, read_string(a, label));
    } else {
      throw tg::DataError(label + " is " + class_name(a.cls) +
                          ", expected an integer, float or string");
    }
  }
  return out;
}

std::vector<int64_t> dataset_dims(const Node& ds) {
  const std::string what = "cannot read the shape of " + ds.path;
  Handle space = checked(H5Dget_space(ds.id()), H5Sclose, what);
  H5S_class_t cls = H5Sget_simple_extent_type(space.get());
  if (cls == H5S_NULL) throw tg::DataError(ds.path + " has no data (null dataspace)");
  if (cls == H5S_SCALAR) return {};
  if (cls != H5S_SIMPLE) throw_h5_error(what);
  int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > H5S_MAX_RANK) throw_h5_error(what);
  hsize_t dims[H5S_MAX_RANK];
  check_status(H5Sget_simple_extent_dims(space.get(), dims, nullptr), what);
  std::vector<int64_t> out;
  for (int i = 0; i < rank; ++i) {
    // Real dims are far below 2^62; anything above is a hostile header.
    if (dims[i] > (hsize_t{1} << 62)) throw tg::DataError(ds.path + " has an implausible dimension");
    out.push_back(static_cast<int64_t>(dims[i]));
  }
  return out;
}

std::string shape_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

namespace {

// "float64", "int32", "uint8", or the class for anything else.
std::string type_description(hid_t type) {
  const H5T_class_t cls = H5Tget_class(type);
  const std::string bits = std::to_string(8 * H5Tget_size(type));
  if (cls == H5T_FLOAT) return "float" + bits;
  if (cls == H5T_INTEGER) return (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + bits;
  return class_name(cls);
}

}  // namespace

void require_float32(const Node& ds) {
  Handle type = checked(H5Dget_type(ds.id()), H5Tclose, "cannot read the type of " + ds.path);
  // Exactly IEEE binary32 (either byte order; HDF5 swaps big-endian for us):
  // float64 or integers would silently lose or invent precision.
  if (H5Tequal(type.get(), H5T_IEEE_F32LE) > 0 || H5Tequal(type.get(), H5T_IEEE_F32BE) > 0) return;
  H5Eclear2(H5E_DEFAULT);
  throw tg::DataError(ds.path + " is " + type_description(type.get()) +
                      ", expected float32: convert it with .astype(numpy.float32)");
}

void require_integer(const Node& ds, size_t bytes, bool unsigned_only) {
  Handle type = checked(H5Dget_type(ds.id()), H5Tclose, "cannot read the type of " + ds.path);
  bool ok = H5Tget_class(type.get()) == H5T_INTEGER;
  if (ok && bytes != 0) ok = H5Tget_size(type.get()) == bytes;
  if (ok && unsigned_only) ok = H5Tget_sign(type.get()) == H5T_SGN_NONE;
  if (!ok) {
    std::string want = unsigned_only ? "uint" : "int";
    want += bytes ? std::to_string(8 * bytes) : std::string(" (any width)");
    throw tg::DataError(ds.path + " is " + type_description(type.get()) + ", expected " + want);
  }
}

bool has_checksum(const Node& ds) {
  Handle dcpl = checked(H5Dget_create_plist(ds.id()), H5Pclose, "cannot inspect " + ds.path);
  const int n = H5Pget_nfilters(dcpl.get());
  if (n < 0) throw_h5_error("cannot inspect " + ds.path);
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0, config = 0;
    size_t n_values = 0;
    const H5Z_filter_t id =
        H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &n_values, nullptr, 0, nullptr, &config);
    if (id < 0) throw_h5_error("cannot inspect " + ds.path);
    if (id == H5Z_FILTER_FLETCHER32) return true;
  }
  return false;
}

void read_dataset(const Node& ds, hid_t mem_type, void* out, bool require_checksum) {
  Handle space = checked(H5Dget_space(ds.id()), H5Sclose, "cannot read " + ds.path);
  if (H5Sget_simple_extent_npoints(space.get()) == 0) return;
  const bool checksummed = has_checksum(ds);
  if (require_checksum && !checksummed)
    throw tg::DataError("dataset " + ds.path + " has no checksum, but every dataset of a "
                        "format_version 2 file carries one: the file was rewritten by another tool; "
                        "re-save it with tapegpt");
  if (H5Dread(ds.id(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0) return;
  const std::string detail = h5_error_detail();
  if (checksummed && (detail.find("Fletcher32") != std::string::npos ||
                      detail.find("checksum") != std::string::npos))
    throw tg::DataError("dataset " + ds.path + " fails its Fletcher32 checksum: its bytes changed "
                        "after it was written (disk, copy or transfer damage); use another copy or "
                        "an earlier checkpoint");
  throw tg::DataError("cannot read " + ds.path + (detail.empty() ? "" : " (" + detail + ")"));
}

}  // namespace checkpoints
