// The trained bpe's pre-tokenizers (Note [BPE pre-split] in tokenizer_spec.h).
#include "data/bpe_split.h"

#include "autograd/base/check.h"
#include "data/byte_split.h"
#include "data/gpt2_split.h"
#include "data/tokenizer_spec.h"
#include "data/utf8.h"

namespace data {

void bpe_split(const std::string& split, std::string_view text, const std::function<void(size_t, size_t)>& emit) {
  if (split.empty()) {
    for (size_t i = 0; i < text.size();) {
      const size_t end = byte_chunk_end(text, i);
      emit(i, end);
      i = end;
    }
    return;
  }
  TG_CHECK(split == kSplitGpt2);
  // Note [GPT-2 split of any bytes]: valid runs through the regex, each
  // invalid byte alone.
  for (size_t i = 0; i < text.size();) {
    const std::string_view rest = text.substr(i);
    const size_t bad = utf8_invalid_at(rest);
    const size_t run = bad == std::string_view::npos ? rest.size() : bad;
    if (run > 0) gpt2_split(rest.substr(0, run), [&](size_t b, size_t e) { emit(i + b, i + e); });
    i += run;
    if (i < text.size()) {
      emit(i, i + 1);
      ++i;
    }
  }
}

}  // namespace data
