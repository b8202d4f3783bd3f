// The pre-tokenizer of our trained bpe: the chunks BPE merges never cross,
// by the spec's split (Note [BPE pre-split] in tokenizer_spec.h).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace data {

// Calls emit(begin, end) for each chunk of `text`, in order; the chunks cover
// the text exactly, whatever its bytes, so decode(encode(x)) == x. `split` is
// TokenizerSpec::split: "" (byte-class) or "gpt2".
//
// Note [GPT-2 split of any bytes]: GPT-2's regex is defined on valid UTF-8
// only, and trained bpe accepts any bytes. So the text is read as runs of
// valid UTF-8 and invalid bytes (scanning left to right: a byte that does not
// start a valid sequence is invalid, and the scan moves on by one byte); each
// run of valid UTF-8 is split by the regex and each invalid byte is a chunk
// of its own (it never merges). Valid UTF-8 text thus splits exactly as
// GPT-2's tokenizer, llama.cpp's "gpt-2" pre-tokenizer and Hugging Face's
// GPT2Tokenizer split it. (llama.cpp replaces invalid bytes by U+FFFD before
// splitting, so it cannot reproduce invalid UTF-8 anyway.)
void bpe_split(const std::string& split, std::string_view text, const std::function<void(size_t, size_t)>& emit);

}  // namespace data
