// Safe block cuts for each tokenizer (Note [Safe block cuts] in block_cut.h).
#include "data/block_cut.h"

#include <cstdint>

#include "autograd/base/check.h"
#include "data/utf8.h"

namespace data {
namespace {

bool ascii_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool ascii_digit(unsigned char c) { return c >= '0' && c <= '9'; }

// JavaScript's \s (ECMAScript WhiteSpace and LineTerminator), as gpt2_split.
bool js_space(uint32_t cp) {
  switch (cp) {
    case '\t': case '\n': case 0x0B: case '\f': case '\r': case ' ': case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000: case 0xFEFF:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

bool continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The code point starting at i, or 0xFFFFFFFF when it is not valid UTF-8 or
// is cut short by the end of s.
uint32_t code_point_at(std::string_view s, size_t i) {
  const size_t len = (static_cast<unsigned char>(s[i]) < 0x80) ? 1 : (static_cast<unsigned char>(s[i]) >= 0xF0) ? 4
                     : (static_cast<unsigned char>(s[i]) >= 0xE0) ? 3 : 2;
  if (i + len > s.size() || utf8_invalid_at(s.substr(i, len)) != std::string_view::npos) return 0xFFFFFFFF;
  size_t j = i;
  return utf8_next(s, j);
}

// The code point that ends just before `end` (end > 0).
uint32_t code_point_before(std::string_view s, size_t end) {
  size_t i = end - 1;
  while (i > 0 && end - i < 4 && continuation(static_cast<unsigned char>(s[i]))) --i;
  return code_point_at(s, i);
}

enum ByteClass { kLetter, kDigit, kSpace, kPunct };

// Byte classes of Note [Byte-class chunks].
ByteClass byte_class(unsigned char c) {
  if (ascii_letter(c) || c >= 0x80) return kLetter;
  if (ascii_digit(c)) return kDigit;
  if (c == ' ' || (c >= '\t' && c <= '\r')) return kSpace;
  return kPunct;
}

}  // namespace

CutRule cut_rule_for(const std::string& tokenizer, const std::string& split) {
  if (tokenizer == "byte") return CutRule::kAnywhere;
  if (tokenizer == "char") return CutRule::kUtf8;
  if (tokenizer == "bpe") return split.empty() ? CutRule::kByteChunks : CutRule::kGpt2;
  TG_CHECK(tokenizer == "gpt2");
  return CutRule::kGpt2;
}

bool is_safe_cut(CutRule rule, std::string_view text, size_t p) {
  TG_CHECK(p > 0 && p < text.size());
  const auto a = static_cast<unsigned char>(text[p - 1]);
  const auto b = static_cast<unsigned char>(text[p]);
  switch (rule) {
    case CutRule::kAnywhere:
      return true;
    case CutRule::kUtf8:
      return !continuation(b);
    case CutRule::kByteChunks: {
      const ByteClass ca = byte_class(a), cb = byte_class(b);
      if (cb == kSpace) return false;
      return ca == kSpace ? a != ' ' : ca != cb;
    }
    case CutRule::kGpt2:
      if (b < 0x80 && ascii_letter(a)) return !ascii_letter(b);
      if (b < 0x80 && ascii_digit(a)) return !ascii_digit(b);
      if (a != '\n' || continuation(b)) return false;
      // A character cut off by the end of `text` might be a space: not safe.
      if (const uint32_t cp = code_point_at(text, p); cp == 0xFFFFFFFF || js_space(cp)) return false;
      if (p == 1) return true;
      const uint32_t before = code_point_before(text, p - 1);
      return before != 0xFFFFFFFF && !js_space(before);
  }
  return false;
}

size_t safe_cut_at_or_before(CutRule rule, std::string_view text, size_t hi, size_t lo) {
  if (lo == 0) lo = 1;
  for (size_t p = hi; p >= lo && p > 0; --p) {
    if (is_safe_cut(rule, text, p)) return p;
  }
  return 0;
}

size_t safe_cut_at_or_after(CutRule rule, std::string_view text, size_t lo) {
  for (size_t p = lo == 0 ? 1 : lo; p < text.size(); ++p) {
    if (is_safe_cut(rule, text, p)) return p;
  }
  return 0;
}

}  // namespace data
