// Training our byte-level BPE tokenizer on a corpus.
#pragma once

#include <cstdint>
#include <string_view>

#include "data/tokenizer.h"
#include "data/tokenizer_spec.h"

namespace data {

// Learns merges until the vocabulary has `vocab_size` tokens (256 bytes plus
// one token per merge), or until no two adjacent tokens remain anywhere.
// Chunks come from byte_chunk_end, so merges never cross a chunk. The most
// frequent pair wins; ties go to the smaller (left id, right id), so the
// result depends only on the text and vocab_size. progress, if given, gets
// (merges done, merges wanted). Throws tg::UsageError when vocab_size is
// outside [256, kMaxVocabSize].
TokenizerSpec bpe_train(std::string_view text, int64_t vocab_size, const Progress& progress = nullptr);

}  // namespace data
