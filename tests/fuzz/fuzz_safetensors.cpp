// libFuzzer target: the safetensors parser and the Hugging Face GPT-2 import
// on arbitrary bytes. A file that parses must keep every tensor inside the
// input, with bytes = elements × dtype size; converting its float tensors and
// importing it as GPT-2 either succeeds or throws tg::DataError. A
// "config_json" entry in the file's __metadata__, if any, is used as the
// config.json text, so the fuzzer reaches that parser too.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "autograd/base/check.h"
#include "autograd/base/errors.h"
#include "checkpoints/hf_gpt2.h"
#include "checkpoints/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int64_t n = static_cast<int64_t>(size);
  try {
    const checkpoints::Safetensors st = checkpoints::safetensors_parse(data, n);
    int64_t total = 0;
    for (const checkpoints::SafetensorsTensor& t : st.tensors) {
      TG_CHECK(t.data >= data && t.bytes >= 0 && t.data + t.bytes <= data + n);
      total += t.bytes;
      if (!checkpoints::safetensors_float_dtype(t.dtype)) continue;
      TG_CHECK(t.bytes == t.numel * (t.dtype == "F32" ? 4 : 2));
      std::vector<float> out(static_cast<size_t>(t.numel));
      checkpoints::safetensors_to_float(t, out.data());
    }
    TG_CHECK(total <= n);
    const auto it = st.metadata.find("config_json");
    const checkpoints::HfGpt2 m = checkpoints::hf_gpt2_import(st, it == st.metadata.end() ? "" : it->second);
    TG_CHECK(m.store.values.size() >= m.store.total);
  } catch (const tg::DataError&) {
  }
  return 0;
}
