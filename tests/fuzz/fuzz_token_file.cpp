// libFuzzer target: data::TokenFile on arbitrary bytes. A file that opens
// must deliver exactly size() ids, each below vocab_size().
#include <cstddef>
#include <cstdint>
#include <vector>

#include "autograd/base/check.h"
#include "autograd/base/errors.h"
#include "data/token_file.h"
#include "fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::FuzzInputFile file(".bin");
  const std::string& path = file.write(data, size);
  try {
    const data::TokenFile f(path);
    TG_CHECK(f.size() >= 0 && f.vocab_size() > 0);
    TG_CHECK(static_cast<int64_t>(size) == data::kTokenFileHeaderBytes + f.size() * f.bytes_per_token());
    std::vector<int32_t> ids(static_cast<size_t>(f.size()));
    f.copy(ids.data(), 0, f.size());
    for (int64_t i = 0; i < f.size(); ++i) {
      TG_CHECK(ids[i] >= 0 && ids[i] < f.vocab_size());
      TG_CHECK(f[i] == ids[i]);
    }
    TG_CHECK(f.hash().size() == 16);
  } catch (const tg::DataError&) {
  }
  return 0;
}
