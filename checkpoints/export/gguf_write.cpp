// The GGUF writer (Note [GGUF layout] in gguf_write.h).
#include "checkpoints/export/gguf_write.h"

#include <cmath>
#include <cstring>

#include "autograd/base/atomic_file.h"
#include "autograd/base/check.h"
#include "autograd/base/errors.h"

namespace checkpoints {

namespace {

constexpr uint32_t kVersion = 3;
constexpr uint64_t kAlignment = 32;  // GGUF's default general.alignment

// GGUF's value types (gguf.md, enum gguf_type).
enum : uint32_t { kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7, kString = 8, kArray = 9 };

// Every number in a GGUF file is little-endian; so is every machine tapegpt
// builds for (x86-64, arm64), which this check keeps true.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "GGUF is written little-endian");

template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void put_string(std::string& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out += s;
}

void pad_to(std::string& out, uint64_t alignment) {
  while (out.size() % alignment) out.push_back('\0');
}

}  // namespace

uint16_t f16_from_f32(float x, bool* overflow) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return sign | 0x7E00u;  // NaN stays NaN
  if (abs >= 0x477FF000u) {                        // >= 65520 rounds to infinity
    *overflow = true;
    return sign | 0x7C00u;
  }
  if (abs < 0x38800000u) {  // below 2^-14: a half subnormal, a multiple of 2^-24
    float a;
    std::memcpy(&a, &abs, sizeof a);
    // a·2^24 is exact (a power-of-two scale) and below 1024; nearbyint rounds
    // it to nearest even in the default rounding mode.
    return sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f));
  }
  // Normal: rebias the exponent (127 → 15) and keep 10 of the 23 mantissa
  // bits, rounding the 13 dropped bits to nearest even; a carry out of the
  // mantissa correctly bumps the exponent.
  uint32_t h = ((abs >> 23) - 127 + 15) << 10 | ((abs >> 13) & 0x3FFu);
  const uint32_t rest = abs & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return sign | static_cast<uint16_t>(h);
}

void GgufWriter::add_u32(const std::string& key, uint32_t v) {
  put_string(kv_, key), put(kv_, kU32), put(kv_, v), ++n_kv_;
}
void GgufWriter::add_f32(const std::string& key, float v) {
  put_string(kv_, key), put(kv_, kF32), put(kv_, v), ++n_kv_;
}
void GgufWriter::add_bool(const std::string& key, bool v) {
  put_string(kv_, key), put(kv_, kBool), put<uint8_t>(kv_, v ? 1 : 0), ++n_kv_;
}
void GgufWriter::add_string(const std::string& key, const std::string& v) {
  put_string(kv_, key), put(kv_, kString), put_string(kv_, v), ++n_kv_;
}
void GgufWriter::add_strings(const std::string& key, const std::vector<std::string>& v) {
  put_string(kv_, key), put(kv_, kArray), put(kv_, kString), put<uint64_t>(kv_, v.size());
  for (const std::string& s : v) put_string(kv_, s);
  ++n_kv_;
}
void GgufWriter::add_i32s(const std::string& key, const std::vector<int32_t>& v) {
  put_string(kv_, key), put(kv_, kArray), put(kv_, kI32), put<uint64_t>(kv_, v.size());
  for (int32_t x : v) put(kv_, x);
  ++n_kv_;
}

void GgufWriter::add_tensor(const std::string& name, const std::vector<int64_t>& shape, const float* data,
                            GgufDtype dtype) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  add_tensor(name, shape, std::vector<float>(data, data + n), dtype);
}

void GgufWriter::add_tensor(const std::string& name, const std::vector<int64_t>& shape, std::vector<float> data,
                            GgufDtype dtype) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  TG_CHECK(!shape.empty() && n > 0 && static_cast<int64_t>(data.size()) == n);
  tensors_.push_back(Tensor{name, shape, std::move(data), dtype});
}

void GgufWriter::write(const std::string& path) const {
  std::string head;
  head += "GGUF";
  put(head, kVersion);
  put<uint64_t>(head, tensors_.size());
  put<uint64_t>(head, n_kv_);
  head += kv_;
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    put_string(head, t.name);
    put<uint32_t>(head, static_cast<uint32_t>(t.shape.size()));
    for (size_t i = t.shape.size(); i-- > 0;) put<uint64_t>(head, static_cast<uint64_t>(t.shape[i]));
    put(head, static_cast<uint32_t>(t.dtype));
    put(head, offset);
    const uint64_t bytes = t.data.size() * (t.dtype == GgufDtype::F16 ? 2 : 4);
    offset += (bytes + kAlignment - 1) / kAlignment * kAlignment;
  }
  pad_to(head, kAlignment);

  tg::AtomicFile file(path);
  file.write(head.data(), head.size());
  std::string block;
  for (const Tensor& t : tensors_) {
    block.clear();
    if (t.dtype == GgufDtype::F32) {
      block.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(float));
    } else {
      bool overflow = false;
      for (float x : t.data) put(block, f16_from_f32(x, &overflow));
      if (overflow)
        throw tg::DataError("tensor " + t.name + " holds a value beyond float16's range (|x| >= 65520); "
                            "export it with --dtype f32");
    }
    pad_to(block, kAlignment);
    file.write(block.data(), block.size());
  }
  file.commit();
}

}  // namespace checkpoints
