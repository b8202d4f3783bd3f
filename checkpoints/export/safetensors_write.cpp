// safetensors writer (see safetensors_write.h).
#include "checkpoints/export/safetensors_write.h"

#include <nlohmann/json.hpp>

#include "autograd/base/check.h"

namespace checkpoints {

void safetensors_write(tg::AtomicFile& file, const std::vector<ExportTensor>& tensors) {
  // ordered_json keeps the tensors in file order, so the data offsets rise.
  nlohmann::ordered_json header;
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t offset = 0;
  for (const ExportTensor& t : tensors) {
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    TG_CHECK(n == static_cast<int64_t>(t.data.size()));
    const uint64_t bytes = t.data.size() * sizeof(float);
    header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string json = header.dump();
  while (json.size() % 8) json.push_back(' ');
  std::string head;
  const uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) head.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));  // little-endian
  head += json;
  file.write(head.data(), head.size());
  // float32 data as it is in memory: little-endian on every target (gguf_write.cpp checks).
  for (const ExportTensor& t : tensors) file.write(t.data.data(), t.data.size() * sizeof(float));
}

}  // namespace checkpoints
