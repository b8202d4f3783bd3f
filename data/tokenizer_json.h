// tokenizer.json: a TokenizerSpec as a JSON file beside train.bin and val.bin,
// and loading a prepared data directory's tokenizer.
//
// Note [tokenizer.json format]:
//   {"format": "tapegpt-tokenizer", "version": 1, "type": "bpe",
//    "vocab_size": 1024, "tokens": ["0a", "20", "6865", ...],
//    "merges": [[104, 101], ...]}
// Each token's raw bytes are lowercase hex, since tokens need not be valid
// UTF-8 (bpe, byte, gpt2) and JSON strings must be; "merges" lists (left id,
// right id) by rank. vocab_size repeats len(tokens) for people reading it.
// A bpe with the gpt2 pre-split adds "split": "gpt2" (Note [BPE pre-split]).
#pragma once

#include <string>
#include <string_view>

#include "data/tokenizer.h"
#include "data/tokenizer_spec.h"

namespace data {

std::string tokenizer_json_dump(const TokenizerSpec& spec);

// Parses tokenizer.json text as untrusted input; only checks the JSON shape
// (make_tokenizer checks the spec itself). `where` names the file in errors.
TokenizerSpec tokenizer_json_parse(std::string_view text, const std::string& where);

void tokenizer_json_write(const std::string& path, const TokenizerSpec& spec);  // atomic
TokenizerSpec tokenizer_json_read(const std::string& path);

// make_tokenizer(tokenizer_json_read(dir + "/tokenizer.json")), with errors
// naming the file.
Tokenizer load_tokenizer_dir(const std::string& dir);

}  // namespace data
