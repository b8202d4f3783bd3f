// The pre-tokenizer of our own byte-level BPE: cuts any byte string into
// chunks by byte class, so BPE merges never cross a chunk boundary.
#pragma once

#include <cstddef>
#include <string_view>

namespace data {

// End (exclusive) of the chunk that starts at `begin` (< text.size()).
//
// Note [Byte-class chunks]: in the spirit of GPT-2's regex, but on bytes so
// that any input, valid UTF-8 or not, splits the same way. Byte classes:
// letters (ASCII letters and every byte >= 0x80, so multi-byte UTF-8
// characters stay inside words), digits, whitespace (space \t \n \v \f \r)
// and punctuation (everything else, NUL and controls included). A chunk is
//   - an optional single leading space, then a run of one non-space class
//     (" the", "42", " ..."), or
//   - a whitespace run; when it is followed by a non-space and ends in a
//     space, that last space is left to start the next chunk, as GPT-2's
//     \s+(?!\S) does, so " word" stays one chunk after any indentation.
// Concatenating the chunks gives back the text exactly, which is why
// decode(encode(x)) == x for every byte string.
size_t byte_chunk_end(std::string_view text, size_t begin);

}  // namespace data
