// safetensors parsing and float conversion (Note [safetensors format]).
#include "checkpoints/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "autograd/base/errors.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; this reader copies it as is");

namespace checkpoints {

std::string safetensors_printable(const std::string& name) {
  std::string out = "'";
  for (size_t i = 0; i < name.size() && i < 120; ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (name.size() > 120) out += "...";
  return out + "'";
}

namespace {

// The reference implementation's cap: a header is names and numbers, never
// this large, and the cap bounds what parsing a hostile file can allocate.
constexpr uint64_t kMaxHeaderBytes = 100000000;

// ordered_json keeps the header's order, so tensors are listed as written.
using json = nlohmann::ordered_json;

int64_t dtype_size(const std::string& dtype) {
  static const std::map<std::string, int64_t> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2},
      {"U16", 2},  {"F16", 2}, {"BF16", 2}, {"I32", 4},    {"U32", 4},     {"F32", 4},
      {"F64", 8},  {"I64", 8}, {"U64", 8}};
  const auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

// A non-negative integer that fits int64, or a DataError naming `what`.
int64_t json_count(const json& v, const std::string& what) {
  if (!v.is_number_unsigned() || v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw tg::DataError(what + " is " + v.dump().substr(0, 40) + ", expected a non-negative integer");
  return static_cast<int64_t>(v.get<uint64_t>());
}

SafetensorsTensor parse_entry(const std::string& name, const json& e, const unsigned char* buffer,
                              int64_t buffer_bytes) {
  const std::string where = "tensor " + safetensors_printable(name);
  if (!e.is_object()) throw tg::DataError(where + ": its header entry is not a JSON object");
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!e.contains(key)) throw tg::DataError(where + ": its header entry has no \"" + key + "\"");
  SafetensorsTensor t;
  t.name = name;
  if (!e["dtype"].is_string()) throw tg::DataError(where + ": \"dtype\" is not a string");
  t.dtype = e["dtype"].get<std::string>();
  const int64_t elem = dtype_size(t.dtype);
  if (elem == 0) throw tg::DataError(where + " has unknown dtype " + safetensors_printable(t.dtype));

  const json& shape = e["shape"];
  if (!shape.is_array()) throw tg::DataError(where + ": \"shape\" is not an array");
  t.numel = 1;
  for (const json& d : shape) {
    const int64_t n = json_count(d, where + ": a dimension");
    // Checked product: the byte count is compared with the offsets below.
    if (n != 0 && t.numel > std::numeric_limits<int64_t>::max() / elem / n)
      throw tg::DataError(where + " has shape " + shape.dump().substr(0, 80) + ", too large for any file");
    t.numel *= n;
    t.shape.push_back(n);
  }

  const json& off = e["data_offsets"];
  if (!off.is_array() || off.size() != 2)
    throw tg::DataError(where + ": \"data_offsets\" is not a [begin, end] pair");
  const int64_t begin = json_count(off[0], where + ": data begin");
  const int64_t end = json_count(off[1], where + ": data end");
  if (end < begin)
    throw tg::DataError(where + " has data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                        "], which end before they begin");
  if (end > buffer_bytes)
    throw tg::DataError(where + " ends at byte " + std::to_string(end) + " of the data, but the file holds only " +
                        std::to_string(buffer_bytes) + " data bytes: the file is truncated or damaged");
  t.bytes = end - begin;
  if (t.bytes != t.numel * elem)
    throw tg::DataError(where + " has shape " + shape.dump().substr(0, 80) + " of " + t.dtype + " (" +
                        std::to_string(t.numel * elem) + " bytes) but data_offsets span " +
                        std::to_string(t.bytes) + " bytes");
  t.data = buffer + begin;
  return t;
}

// The reference's rule: sorted by offset, tensors tile the buffer exactly.
void check_tiling(const std::vector<SafetensorsTensor>& tensors, const unsigned char* buffer,
                  int64_t buffer_bytes) {
  std::vector<const SafetensorsTensor*> order;
  for (const SafetensorsTensor& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const SafetensorsTensor* a, const SafetensorsTensor* b) {
    return a->data != b->data ? a->data < b->data : a->bytes < b->bytes;
  });
  int64_t expected = 0;
  for (const SafetensorsTensor* t : order) {
    const int64_t begin = t->data - buffer;
    if (begin < expected)
      throw tg::DataError("tensor " + safetensors_printable(t->name) + " starts at data byte " + std::to_string(begin) +
                          ", inside the previous tensor (which ends at " + std::to_string(expected) +
                          "): overlapping data_offsets, the file is damaged");
    if (begin > expected)
      throw tg::DataError("data bytes " + std::to_string(expected) + " to " + std::to_string(begin) +
                          " belong to no tensor (a gap before " + safetensors_printable(t->name) + "): the file is damaged");
    expected = begin + t->bytes;
  }
  if (expected != buffer_bytes)
    throw tg::DataError("the file has " + std::to_string(buffer_bytes - expected) +
                        " bytes after its last tensor's data: the file is damaged or not safetensors");
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // Inf or NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);  // rebias 15 -> 127
  } else if (mant == 0) {
    bits = sign;  // ±0
  } else {
    // Subnormal half: value = mant · 2^-24; normalise it for float32.
    int e = -1;
    do {
      mant <<= 1;
      ++e;
    } while ((mant & 0x400u) == 0);
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace

const SafetensorsTensor* Safetensors::find(const std::string& name) const {
  for (const SafetensorsTensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

Safetensors safetensors_parse(const unsigned char* bytes, int64_t size) {
  if (size < 8)
    throw tg::DataError("is " + std::to_string(size) + " bytes, too short for the 8-byte header length: "
                        "the file is truncated or not safetensors");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  if (n > static_cast<uint64_t>(size - 8))
    throw tg::DataError("its header length " + std::to_string(n) + " runs past the end of the file (" +
                        std::to_string(size) + " bytes): the file is truncated or not safetensors");
  if (n > kMaxHeaderBytes)
    throw tg::DataError("its header length " + std::to_string(n) + " exceeds safetensors' limit of " +
                        std::to_string(kMaxHeaderBytes) + " bytes: not a safetensors file");
  if (n < 2 || bytes[8] != '{')
    throw tg::DataError("its header does not start with '{': not a safetensors file");

  // Duplicate top-level keys would silently replace one another: refuse them.
  std::set<std::string> keys;
  std::string duplicate;
  const auto on_event = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth == 1 && event == json::parse_event_t::key && !keys.insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  json header;
  try {
    header = json::parse(bytes + 8, bytes + 8 + n, on_event);
  } catch (const json::exception& e) {
    throw tg::DataError(std::string("its JSON header is malformed (") + e.what() + ")");
  }
  if (!header.is_object()) throw tg::DataError("its JSON header is not an object");
  if (!duplicate.empty()) throw tg::DataError("its header names tensor " + safetensors_printable(duplicate) + " twice");

  const unsigned char* buffer = bytes + 8 + n;
  const int64_t buffer_bytes = size - 8 - static_cast<int64_t>(n);
  Safetensors out;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) throw tg::DataError("its \"__metadata__\" is not a JSON object");
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string()) throw tg::DataError("its \"__metadata__\" entry " + safetensors_printable(k) + " is not a string");
        out.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    out.tensors.push_back(parse_entry(name, entry, buffer, buffer_bytes));
  }
  check_tiling(out.tensors, buffer, buffer_bytes);
  return out;
}

bool safetensors_float_dtype(const std::string& dtype) {
  return dtype == "F32" || dtype == "F16" || dtype == "BF16";
}

void safetensors_to_float(const SafetensorsTensor& t, float* out) {
  const unsigned char* p = t.data;
  if (t.dtype == "F32") {
    std::memcpy(out, p, static_cast<size_t>(t.numel) * 4);
  } else if (t.dtype == "F16") {
    for (int64_t i = 0; i < t.numel; ++i)
      out[i] = half_to_float(static_cast<uint16_t>(p[2 * i] | (p[2 * i + 1] << 8)));
  } else if (t.dtype == "BF16") {
    // bfloat16 is the top half of a float32.
    for (int64_t i = 0; i < t.numel; ++i) {
      const uint32_t bits = static_cast<uint32_t>(p[2 * i] | (p[2 * i + 1] << 8)) << 16;
      std::memcpy(out + i, &bits, sizeof bits);
    }
  } else {
    throw tg::DataError("tensor " + safetensors_printable(t.name) + " has dtype " + t.dtype +
                        "; tapegpt imports only F32, F16 and BF16 weights");
  }
}

MappedFile::MappedFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw tg::DataError(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw tg::DataError("is not a regular file");
  }
  size_ = static_cast<int64_t>(st.st_size);
  if (size_ > 0) {
    void* map = ::mmap(nullptr, static_cast<size_t>(size_), PROT_READ, MAP_PRIVATE, fd, 0);
    const int map_errno = errno;
    ::close(fd);  // the mapping keeps the file open
    if (map == MAP_FAILED) throw tg::DataError(std::string("cannot memory-map it: ") + std::strerror(map_errno));
    data_ = static_cast<const unsigned char*>(map);
  } else {
    ::close(fd);
  }
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<unsigned char*>(data_), static_cast<size_t>(size_));
}

}  // namespace checkpoints
