// Where a long text may be cut into blocks that are tokenized separately
// with exactly the ids of tokenizing it whole.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace data {

// Note [Safe block cuts]: a cut at p is safe when every pre-tokenizer chunk
// ends at p, and the chunks before p are found the same way when the text
// stops at p; then encode(text) == encode(text[..p)) + encode(text[p..)),
// since BPE never merges across chunks. Each rule looks only at the bytes
// around p, so cuts are found without running the pre-tokenizer:
//   byte   anywhere;
//   char   not inside a UTF-8 sequence;
//   bpe    (Note [Byte-class chunks]) text[p] is not whitespace, and either
//          text[p-1] is of another non-space class ("ab|." "x|1"), or
//          text[p-1] is whitespace other than ' ' ("\n|The"): a run ending
//          in ' ' would give that space to the next word;
//   gpt2   (Note [GPT-2 regex]) text[p-1] is an ASCII letter and text[p] an
//          ASCII non-letter ("the| ", "it|'s": ' ?\p{L}+' stops there and
//          the contraction starts afresh), or text[p-1] an ASCII digit and
//          text[p] an ASCII non-digit, or text[p-1] is '\n' after a
//          non-space character and text[p] is not whitespace ("end.\n|The"):
//          the lone '\n' is its own chunk with or without what follows,
//          whereas "  \n|X" would become one chunk "  \n" if cut there.
// A multi-byte character, a run of spaces or an emoji sequence is never cut:
// none of them holds such a position.
enum class CutRule { kAnywhere, kUtf8, kByteChunks, kGpt2 };

// The rule for a tokenizer type (char, byte, bpe, gpt2) and, for bpe, its
// split ("" byte-class or "gpt2", Note [BPE pre-split]): a bpe with the gpt2
// split cuts as gpt2 does, which is safe around invalid bytes too, since every
// gpt2 cut has an ASCII byte on each side (Note [GPT-2 split of any bytes]).
CutRule cut_rule_for(const std::string& tokenizer, const std::string& split = "");

// Whether p (0 < p < text.size()) is a safe cut.
bool is_safe_cut(CutRule rule, std::string_view text, size_t p);

// The largest safe cut in [lo, hi] (hi < text.size()), or 0 when there is none.
size_t safe_cut_at_or_before(CutRule rule, std::string_view text, size_t hi, size_t lo);
// The smallest safe cut in [lo, text.size()), or 0 when there is none.
size_t safe_cut_at_or_after(CutRule rule, std::string_view text, size_t lo);

}  // namespace data
