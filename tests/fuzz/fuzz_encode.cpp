// libFuzzer target: the four encoders on arbitrary text (first byte picks
// the tokenizer), and decode on arbitrary ids. encode either throws
// tg::DataError (char: unknown or invalid UTF-8; gpt2: invalid UTF-8) or
// returns ids in range that decode back to the text exactly.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "autograd/base/check.h"
#include "autograd/base/errors.h"
#include "data/bpe_train.h"
#include "data/gpt2_vocab.h"
#include "data/tokenizer.h"

namespace {

const std::vector<data::Tokenizer>& tokenizers() {
  static const std::vector<data::Tokenizer> all = [] {
    const std::string text =
        "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n"
        "caf\xc3\xa9 na\xc3\xafve \xe2\x80\x94 \xf0\x9f\x98\x80 tab\there\r\n";
    return std::vector<data::Tokenizer>{
        data::make_tokenizer(data::char_spec_from_text(text)),
        data::make_tokenizer(data::byte_spec()),
        data::make_tokenizer(data::bpe_train(text + text, 300)),
        data::make_tokenizer(data::gpt2_spec()),
    };
  }();
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const data::Tokenizer& tok = tokenizers()[data[0] % 4];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] & 0x80) {
    // Arbitrary ids: decode succeeds exactly when all are in range.
    std::vector<int32_t> ids((size - 1) / 4);
    if (!ids.empty()) std::memcpy(ids.data(), data + 1, ids.size() * 4);
    bool in_range = true;
    for (int32_t id : ids) in_range = in_range && id >= 0 && id < tok.vocab_size();
    try {
      (void)tok.decode(ids);
      TG_CHECK(in_range);
    } catch (const tg::DataError&) {
      TG_CHECK(!in_range);
    }
    return 0;
  }
  std::vector<int32_t> ids;
  try {
    ids = tok.encode(text);
  } catch (const tg::DataError&) {
    TG_CHECK(tok.type() == "char" || tok.type() == "gpt2");  // byte and bpe take any bytes
    return 0;
  }
  for (int32_t id : ids) TG_CHECK(id >= 0 && id < tok.vocab_size());
  TG_CHECK(tok.decode(ids) == text);
  return 0;
}
