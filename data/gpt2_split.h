// The GPT-2 pre-tokenizer: the reference regex, run with PCRE2, that cuts
// text into the words BPE then works on.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

namespace data {

// Calls emit(begin, end) for each GPT-2 word of `text`, in order; the words
// cover the text exactly. `text` must be valid UTF-8 (callers check it once
// with utf8_invalid_at; PCRE2's own per-call check would make this quadratic).
//
// Note [GPT-2 regex]: the reference (npm gpt-3-encoder, as OpenAI's encoder.py)
// uses  's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// as a JavaScript /u regex. JavaScript's \s is not PCRE2's: it includes U+FEFF
// and excludes U+0085 and U+180E, so \s is spelled out as JavaScript's class.
// The pattern is compiled once (PCRE2_UTF | PCRE2_UCP, JIT when available).
// Most matches in ASCII text are found without PCRE2 (Note [GPT-2 ASCII
// fast path] in gpt2_split.cpp); gpt2_split_reference asks PCRE2 for every
// match and is the test oracle.
void gpt2_split(std::string_view text, const std::function<void(size_t, size_t)>& emit);
void gpt2_split_reference(std::string_view text, const std::function<void(size_t, size_t)>& emit);

}  // namespace data
