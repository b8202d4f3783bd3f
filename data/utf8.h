// UTF-8 helpers: strict validation (the same rules PCRE2 and browsers apply:
// no overlong forms, no surrogates, nothing past U+10FFFF), decoding one code
// point, encoding one, and a printable description for error messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace data {

// Byte offset of the first invalid sequence in `s`, or std::string_view::npos
// when all of `s` is valid UTF-8.
size_t utf8_invalid_at(std::string_view s);

// Decodes the code point starting at s[i] and moves i past it. `s` must be
// valid UTF-8 at i (callers validate first with utf8_invalid_at).
uint32_t utf8_next(std::string_view s, size_t& i);

// The UTF-8 bytes of code point `cp` (cp <= 0x10FFFF, not a surrogate).
std::string utf8_encode(uint32_t cp);

// How an error message shows one character: 'x' (U+0078), or just U+000A
// for control and invisible characters so the message stays on one line.
std::string utf8_describe(uint32_t cp);

// Largest cut <= pos that does not split a UTF-8 sequence (moves back over
// continuation bytes, at most three).
size_t utf8_boundary_before(std::string_view s, size_t pos);

}  // namespace data
