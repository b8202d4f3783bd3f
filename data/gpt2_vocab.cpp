// Parses the embedded GPT-2 encoder.json and vocab.bpe into a TokenizerSpec.
#include "data/gpt2_vocab.h"

#include <nlohmann/json.hpp>

#include <array>
#include <string_view>
#include <unordered_map>

#include "autograd/base/check.h"
#include "data/utf8.h"

// The two files are assembled into .rodata at build time (CMake passes their
// directory as TAPEGPT_GPT2_DIR and rebuilds this file when they change), so
// the binary finds them from any working directory.
#define TAPEGPT_INCBIN(name, file)                                   \
  asm(".section .rodata\n"                                           \
      ".balign 16\n"                                                 \
      ".global " #name "_begin\n"                                    \
      ".hidden " #name "_begin\n"                                    \
      #name "_begin:\n"                                              \
      ".incbin \"" TAPEGPT_GPT2_DIR "/" file "\"\n"                  \
      ".global " #name "_end\n"                                      \
      ".hidden " #name "_end\n"                                      \
      #name "_end:\n"                                                \
      ".byte 0\n"                                                    \
      ".previous\n");                                                \
  extern "C" const char name##_begin[];                              \
  extern "C" const char name##_end[];

TAPEGPT_INCBIN(tapegpt_gpt2_encoder_json, "encoder.json")
TAPEGPT_INCBIN(tapegpt_gpt2_vocab_bpe, "vocab.bpe")

namespace data {
namespace {

std::array<uint32_t, 256> byte_to_unicode_table() {
  std::array<uint32_t, 256> table{};
  std::array<bool, 256> printable{};
  for (int b = '!'; b <= '~'; ++b) printable[b] = true;
  for (int b = 0xA1; b <= 0xAC; ++b) printable[b] = true;
  for (int b = 0xAE; b <= 0xFF; ++b) printable[b] = true;
  uint32_t next = 256;
  for (int b = 0; b < 256; ++b) table[b] = printable[b] ? static_cast<uint32_t>(b) : next++;
  return table;
}

TokenizerSpec parse_gpt2() {
  const auto table = byte_to_unicode_table();
  std::unordered_map<uint32_t, char> unicode_to_byte;
  for (int b = 0; b < 256; ++b) unicode_to_byte[table[b]] = static_cast<char>(b);

  // The embedded files are ours, checked by tests, so a failure here is a
  // broken build (TG_CHECK), not a user error.
  const nlohmann::json encoder =
      nlohmann::json::parse(tapegpt_gpt2_encoder_json_begin, tapegpt_gpt2_encoder_json_end);
  TG_CHECK(encoder.is_object());
  TokenizerSpec spec;
  spec.type = "gpt2";
  spec.tokens.resize(encoder.size());
  std::unordered_map<std::string, int32_t> id_of;  // encoder.json's own strings
  for (const auto& [text, id_json] : encoder.items()) {
    const int64_t id = id_json.get<int64_t>();
    TG_CHECK(id >= 0 && id < static_cast<int64_t>(spec.tokens.size()) && spec.tokens[id].empty());
    std::string bytes;
    for (size_t i = 0; i < text.size();) {
      auto it = unicode_to_byte.find(utf8_next(text, i));
      TG_CHECK(it != unicode_to_byte.end());
      bytes += it->second;
    }
    spec.tokens[id] = std::move(bytes);
    id_of.emplace(text, static_cast<int32_t>(id));
  }

  // vocab.bpe: a "#version" line, then one "left right" merge per line by rank.
  std::string_view bpe(tapegpt_gpt2_vocab_bpe_begin,
                       static_cast<size_t>(tapegpt_gpt2_vocab_bpe_end - tapegpt_gpt2_vocab_bpe_begin));
  size_t pos = bpe.find('\n');
  TG_CHECK(pos != std::string_view::npos);
  for (++pos; pos < bpe.size();) {
    size_t eol = bpe.find('\n', pos);
    if (eol == std::string_view::npos) eol = bpe.size();
    const std::string_view line = bpe.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    TG_CHECK(space != std::string_view::npos);
    auto left = id_of.find(std::string(line.substr(0, space)));
    auto right = id_of.find(std::string(line.substr(space + 1)));
    TG_CHECK(left != id_of.end() && right != id_of.end());
    spec.merges.push_back({left->second, right->second});
  }
  return spec;
}

}  // namespace

const TokenizerSpec& gpt2_spec() {
  static const TokenizerSpec spec = parse_gpt2();
  return spec;
}

uint32_t gpt2_byte_to_unicode(uint8_t byte) {
  static const std::array<uint32_t, 256> table = byte_to_unicode_table();
  return table[byte];
}

}  // namespace data
