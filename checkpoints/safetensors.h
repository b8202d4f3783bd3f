// safetensors: Hugging Face's tensor file, read as untrusted input.
//
// Note [safetensors format]: an 8-byte little-endian header length N, then N
// bytes of JSON, then the data buffer. The JSON object maps each tensor name
// to {"dtype": "F32", "shape": [d0, d1, ...], "data_offsets": [begin, end]}
// (byte offsets into the data buffer) and may hold "__metadata__", a string →
// string map. Like the reference implementation (huggingface/safetensors),
// we require the tensors, sorted by begin, to tile the buffer exactly: no
// overlap, no gap, nothing past the end and no trailing bytes, and each
// tensor's byte count to equal its element count times its dtype's size.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace checkpoints {

struct SafetensorsTensor {
  std::string name;
  std::string dtype;                // "F32", "F16", "BF16", "I64", ... as in the file
  std::vector<int64_t> shape;
  int64_t numel = 0;
  const unsigned char* data = nullptr;  // into the parsed bytes; not aligned
  int64_t bytes = 0;
};

struct Safetensors {
  std::vector<SafetensorsTensor> tensors;  // in the header's order
  std::map<std::string, std::string> metadata;

  const SafetensorsTensor* find(const std::string& name) const;  // null if absent
};

// Parses a whole file's bytes (they must outlive the result). Throws
// tg::DataError saying what is wrong; never reads outside [bytes, bytes+size).
Safetensors safetensors_parse(const unsigned char* bytes, int64_t size);

// True for the dtypes safetensors_to_float converts: F32, F16 and BF16.
bool safetensors_float_dtype(const std::string& dtype);

// Converts a F32/F16/BF16 tensor to float32 (little-endian data) into
// out[0 .. numel). Throws tg::DataError for any other dtype.
void safetensors_to_float(const SafetensorsTensor& t, float* out);

// A name from the file, quoted and printable on one line: control bytes
// escaped and long names cut, so a hostile name cannot break an error line.
std::string safetensors_printable(const std::string& name);

// A read-only memory map of a whole file (the bytes safetensors_parse reads).
class MappedFile {
 public:
  // Throws tg::DataError naming `path` when it cannot be opened or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const unsigned char* data() const { return data_; }
  int64_t size() const { return size_; }

 private:
  const unsigned char* data_ = nullptr;
  int64_t size_ = 0;
};

}  // namespace checkpoints
