// GPT-2 word splitting with PCRE2 (Note [GPT-2 regex] in gpt2_split.h).
#define PCRE2_CODE_UNIT_WIDTH 8
#include "data/gpt2_split.h"

#include <pcre2.h>

#include <memory>
#include <string>

#include "autograd/base/check.h"
#include "autograd/base/errors.h"

namespace data {
namespace {

// ECMAScript's WhiteSpace and LineTerminator code points (its \s), Unicode 15.
#define JS_SPACE "\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}" \
                 "\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}"

constexpr const char* kPattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" JS_SPACE "\\p{L}\\p{N}]+"
    "|[" JS_SPACE "]+(?![^" JS_SPACE "])|[" JS_SPACE "]+";

struct CodeDeleter {
  void operator()(pcre2_code* c) const { pcre2_code_free(c); }
};
struct MatchDataDeleter {
  void operator()(pcre2_match_data* m) const { pcre2_match_data_free(m); }
};

// The compiled pattern is an immutable constant, built on first use.
const pcre2_code* gpt2_pattern() {
  static const std::unique_ptr<pcre2_code, CodeDeleter> code = [] {
    int err = 0;
    PCRE2_SIZE err_offset = 0;
    pcre2_code* c = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kPattern), PCRE2_ZERO_TERMINATED,
                                  PCRE2_UTF | PCRE2_UCP, &err, &err_offset, nullptr);
    TG_CHECK(c != nullptr);
    pcre2_jit_compile(c, PCRE2_JIT_COMPLETE);  // optional speed-up; falls back if unsupported
    return std::unique_ptr<pcre2_code, CodeDeleter>(c);
  }();
  return code.get();
}

}  // namespace

namespace {

struct Matcher {
  const pcre2_code* code = gpt2_pattern();
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> md{pcre2_match_data_create_from_pattern(code, nullptr)};
  Matcher() { TG_CHECK(md != nullptr); }

  // End of the regex match that starts at pos.
  size_t match_end(std::string_view text, size_t pos) {
    const int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), pos,
                               PCRE2_NO_UTF_CHECK, md.get(), nullptr);
    if (rc < 0) {
      // Only resource limits can fail here (every code point matches some
      // alternative), and they depend on the input, so this is a DataError.
      PCRE2_UCHAR msg[120];
      pcre2_get_error_message(rc, msg, sizeof msg);
      throw tg::DataError("gpt2 tokenizer: the regex failed at byte " + std::to_string(pos) +
                          " (" + reinterpret_cast<const char*>(msg) + "); split the text into smaller pieces");
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
    TG_CHECK(ov[0] == pos && ov[1] > ov[0]);
    return ov[1];
  }
};

// ASCII classes as the regex sees them: \p{L}, \p{N} and JavaScript's \s.
enum AsciiClass : unsigned char { kLetter, kDigit, kSpace, kOther, kNonAscii };

struct AsciiTable {
  AsciiClass cls[256];
  AsciiTable() {
    for (int c = 0; c < 256; ++c) {
      cls[c] = c >= 0x80 ? kNonAscii
               : ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) ? kLetter
               : (c >= '0' && c <= '9') ? kDigit
               : (c == ' ' || (c >= '\t' && c <= '\r')) ? kSpace
                                                         : kOther;
    }
  }
};
const AsciiTable kAscii;

inline AsciiClass class_at(std::string_view t, size_t i) {
  return i < t.size() ? kAscii.cls[static_cast<unsigned char>(t[i])] : kSpace;
}

// Note [GPT-2 ASCII fast path]: where the regex's match from pos lies in
// ASCII text and is decided by ASCII characters, it is found here without
// PCRE2, alternative by alternative in the pattern's order; 0 means "ask
// PCRE2" (a non-ASCII character starts, continues or ends the match, since
// it may be a letter, digit or space). Tested against PCRE2 alone.
size_t ascii_match_end(std::string_view t, size_t pos) {
  const size_t n = t.size();
  const AsciiClass c = class_at(t, pos);
  if (c == kNonAscii) return 0;
  if (t[pos] == '\'' && pos + 1 < n) {  // 's|'t|'re|'ve|'m|'ll|'d
    const char a = t[pos + 1];
    const char b = pos + 2 < n ? t[pos + 2] : 0;
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return pos + 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return pos + 3;
  }
  size_t i = pos;
  AsciiClass run = c;
  if (t[pos] == ' ' && pos + 1 < n) {  // " ?" before a letter, digit or other run
    const AsciiClass next = class_at(t, pos + 1);
    if (next == kNonAscii) return 0;
    if (next != kSpace) {
      run = next;
      i = pos + 1;
    }
  }
  if (run != kSpace) {  // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+'
    while (i < n && class_at(t, i) == run) ++i;
    return i < n && class_at(t, i) == kNonAscii ? 0 : i;
  }
  // \s+(?!\S) | \s+: the whole run at the end of the text or before more
  // space; before a non-space, all but its last character (the run minus one
  // is followed by a space), or the one character of a run of one.
  while (i < n && class_at(t, i) == kSpace) ++i;
  if (i == n) return n;
  if (class_at(t, i) == kNonAscii) return 0;
  return i - pos >= 2 ? i - 1 : i;
}

}  // namespace

void gpt2_split(std::string_view text, const std::function<void(size_t, size_t)>& emit) {
  Matcher m;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = ascii_match_end(text, pos);
    if (end == 0) end = m.match_end(text, pos);
    emit(pos, end);
    pos = end;
  }
}

void gpt2_split_reference(std::string_view text, const std::function<void(size_t, size_t)>& emit) {
  Matcher m;
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = m.match_end(text, pos);
    emit(pos, end);
    pos = end;
  }
}

}  // namespace data
