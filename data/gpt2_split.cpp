// GPT-2 word splitting with PCRE2 (Note [GPT-2 regex] in gpt2_split.h).
#define PCRE2_CODE_UNIT_WIDTH 8
#include "data/gpt2_split.h"

#include <pcre2.h>

#include <memory>
#include <string>

#include "autograd/check.h"
#include "autograd/errors.h"

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

void gpt2_split(std::string_view text, const std::function<void(size_t, size_t)>& emit) {
  const pcre2_code* code = gpt2_pattern();
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> md(
      pcre2_match_data_create_from_pattern(code, nullptr));
  TG_CHECK(md != nullptr);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    const int rc = pcre2_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, md.get(), nullptr);
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
    emit(ov[0], ov[1]);
    pos = ov[1];
  }
}

}  // namespace data
