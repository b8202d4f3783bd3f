// GGUF, llama.cpp's model file: a writer of version 3, little-endian.
//
// Note [GGUF layout] (ggml-org/ggml docs/gguf.md): the magic "GGUF", uint32
// version 3, uint64 tensor count, uint64 key-value count; the key-values
// (a string key, a uint32 type, the value; an array is a uint32 element type,
// a uint64 count and the elements); the tensor infos (name, uint32 rank,
// uint64 dims innermost first, uint32 ggml type, uint64 offset into the data
// section); zero padding to general.alignment (32 unless the key says
// otherwise); then each tensor's data, each starting at a multiple of the
// alignment. Strings are a uint64 byte count and the bytes, no NUL.
//
// Dims innermost first: ggml's ne[0] is the contiguous one, so a PyTorch
// weight [out, in] (row-major) is the ggml tensor {in, out} with the same
// bytes. The writer takes PyTorch shapes and reverses them.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace checkpoints {

// ggml's element types that export writes.
enum class GgufDtype : uint32_t { F32 = 0, F16 = 1 };

// float32 → IEEE half, rounded to nearest even (subnormals kept). Values at
// or beyond 65520 in magnitude would become infinity: *overflow is set.
uint16_t f16_from_f32(float x, bool* overflow);

class GgufWriter {
 public:
  void add_u32(const std::string& key, uint32_t v);
  void add_f32(const std::string& key, float v);
  void add_bool(const std::string& key, bool v);
  void add_string(const std::string& key, const std::string& v);
  void add_strings(const std::string& key, const std::vector<std::string>& v);
  void add_i32s(const std::string& key, const std::vector<int32_t>& v);

  // A tensor of PyTorch shape `shape` (row-major) from `data`, stored as
  // `dtype`. The data is copied, so the caller's buffer may go.
  void add_tensor(const std::string& name, const std::vector<int64_t>& shape, const float* data,
                  GgufDtype dtype);
  // The same, taking the values (shape's element count) without a copy.
  void add_tensor(const std::string& name, const std::vector<int64_t>& shape, std::vector<float> data,
                  GgufDtype dtype);

  // Writes the file atomically (Note [Atomic save]). Throws tg::DataError
  // naming the path on any failure, and when a float16 tensor would hold
  // infinity (naming the tensor); no file is left behind then.
  void write(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<int64_t> shape;
    std::vector<float> data;
    GgufDtype dtype;
  };
  std::string kv_;          // the encoded key-values
  uint64_t n_kv_ = 0;
  std::deque<Tensor> tensors_;
};

}  // namespace checkpoints
