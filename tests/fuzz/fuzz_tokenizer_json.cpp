// libFuzzer target: tokenizer.json text → tokenizer_json_parse →
// make_tokenizer. A tokenizer that builds must encode and decode: every id
// decodes, and text it accepts round-trips: decode(encode(x)) == x.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "autograd/base/check.h"
#include "autograd/base/errors.h"
#include "data/tokenizer.h"
#include "data/tokenizer_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const data::TokenizerSpec spec = data::tokenizer_json_parse(text, "fuzz.json");
    const data::Tokenizer tok = data::make_tokenizer(spec);
    TG_CHECK(tok.vocab_size() > 0);
    for (int32_t id = 0; id < tok.vocab_size() && id < 4096; ++id) (void)tok.token_bytes(id);
    std::vector<int32_t> all;
    for (int32_t id = 0; id < tok.vocab_size() && id < 4096; ++id) all.push_back(id);
    const std::string decoded = tok.decode(all);
    // Encoding some text: byte-level tokenizers must round-trip it exactly.
    for (std::string_view sample : {std::string_view("hello world, the cat sat\n"), std::string_view(decoded)}) {
      try {
        const std::vector<int32_t> ids = tok.encode(sample);
        TG_CHECK(tok.decode(ids) == sample);
      } catch (const tg::DataError&) {
        TG_CHECK(tok.type() == "char" || tok.type() == "gpt2");  // only these reject text
      }
    }
  } catch (const tg::DataError&) {
  }
  return 0;
}
