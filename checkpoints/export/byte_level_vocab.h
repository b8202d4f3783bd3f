// A tapegpt tokenizer as a byte-level BPE vocabulary: the token strings and
// merges that GPT-2's file formats use (llama.cpp's GGUF tokenizer.ggml.*
// with model "gpt2", Hugging Face's vocab.json and merges.txt).
//
// Note [Byte-level vocabulary]: those formats hold text, so each byte of a
// token is written as GPT-2's printable stand-in (bytes_to_unicode: space is
// "Ġ", newline "Ċ"), and a merge is "LEFT RIGHT" in that spelling. A reader
// splits a text into pre-tokenizer words, each word into its bytes, and
// applies the merges by rank; the result must be what `tapegpt tokenize`
// gives, so each tokenizer is written as follows:
//   - gpt2: GPT-2's tokens and merges. Our encoder reproduces the reference
//     JavaScript's comma-key aliasing (Note [gpt-3-encoder comma keys] in
//     data/make_tokenizer.cpp), so the aliased pairs are written as merges
//     too, each at the rank our table gives it. <|endoftext|> is a control
//     token (the end-of-text id), never produced from text.
//   - byte: the 256 byte tokens and no merges: a byte never merges, so the
//     pre-tokenizer's words cannot matter.
//   - char: one token per character; a character of k > 1 UTF-8 bytes gets
//     the k - 1 merges that join its bytes left to right. A merge's left side
//     always begins with a UTF-8 lead byte and its right side is a
//     continuation byte, so in valid UTF-8 (all a char tokenizer accepts)
//     merges never join two characters, and any pre-tokenizer that cuts only
//     between characters gives the same tokens. The partial characters and
//     lone continuation bytes those merges pass through are no tokens of the
//     model, but Hugging Face's BPE needs an id for every symbol it holds
//     (else "Token `Ã` out of vocabulary"), so they are kept as `pieces`:
//     vocab.json numbers them after the model's rows, and text made of the
//     tokenizer's characters never ends on one. llama.cpp needs none.
//   - bpe with the gpt2 split (prepare --bpe-split gpt2, Note [BPE pre-split]
//     in data/tokenizer_spec.h): its 256 byte tokens, merged tokens and
//     merges as they are, merge r at rank r. The words are GPT-2's, so
//     pre-tokenizer "gpt-2" cuts valid UTF-8 as we do. Within a word our
//     encoder and llama.cpp both merge the lowest-ranked adjacent pair first,
//     leftmost first on a tie (bpe_merge_chunk; llama.cpp's bigram queue by
//     rank, then position), and a merge's result only ever takes part in
//     later ranks, so they agree. llama.cpp finds merges and tokens by their
//     text, not ids, which is the same thing as long as no two tokens share
//     their bytes: training with the gpt2 split guarantees it (Note [Distinct
//     token bytes] in data/bpe_train.cpp) and a spec that breaks it is
//     refused. It has no special tokens.
//   - bpe with the byte-class split (the default): refused. Its words are
//     our byte classes (Note [Byte-class chunks] in data/byte_split.h), which
//     no pre-tokenizer llama.cpp or Hugging Face's GPT2Tokenizer offers
//     reproduces: GPT-2's regex splits "\n\n" before a word into two words,
//     where ours keeps one, so a learned "\n\n" merge would be lost.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/tokenizer_spec.h"

namespace checkpoints {

struct ByteLevelVocab {
  std::vector<std::string> tokens;  // id → its bytes in GPT-2's printable spelling
  std::vector<std::string> merges;  // "LEFT RIGHT", by rank
  std::vector<std::string> pieces;  // char: symbols the merges pass through that are no token (ids after tokens)
  int32_t end_of_text = -1;         // id of <|endoftext|> (gpt2), else -1
};

// "" when `spec` can be written exactly, else one sentence saying why not.
std::string byte_level_refusal(const data::TokenizerSpec& spec);

// The vocabulary of a tokenizer byte_level_refusal accepts (checks it).
ByteLevelVocab byte_level_vocab(const data::TokenizerSpec& spec);

// A token's bytes in GPT-2's printable spelling.
std::string byte_level_spelling(const std::string& bytes);

}  // namespace checkpoints
