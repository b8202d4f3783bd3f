// Writing a safetensors file (Note [safetensors format] in checkpoints/safetensors.h):
// float32 tensors only, the header's JSON padded with spaces to a multiple
// of 8 bytes, as Hugging Face's writer does, so the data is 8-byte aligned.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/base/atomic_file.h"
#include "checkpoints/export/export_tensors.h"

namespace checkpoints {

// Appends the whole file to `file`: header length, header JSON
// ({"__metadata__": {"format": "pt"}} first, then the tensors in the given
// order), data. The caller commits the file.
void safetensors_write(tg::AtomicFile& file, const std::vector<ExportTensor>& tensors);

}  // namespace checkpoints
