// The GPT-2 vocabulary as a TokenizerSpec, from copies of encoder.json and
// vocab.bpe embedded in the library, so the gpt2 tokenizer needs no files.
#pragma once

#include <cstdint>
#include <string>

#include "data/tokenizer_spec.h"

namespace data {

// GPT-2's 50257 tokens as raw bytes (id = encoder.json's id) and its 50000
// merges as id pairs by rank. Parsed on first use; the result is immutable.
const TokenizerSpec& gpt2_spec();

// GPT-2's bytes_to_unicode(): the printable character standing for each byte
// in encoder.json and vocab.bpe (printable ASCII and Latin-1 stand for
// themselves, the other 68 bytes map to U+0100..U+0143).
uint32_t gpt2_byte_to_unicode(uint8_t byte);

}  // namespace data
