// Tokenizer: text bytes <-> token ids for the four tokenizer types (char,
// byte, bpe, gpt2), always built from a TokenizerSpec by make_tokenizer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data/tokenizer_spec.h"

namespace data {

// Called now and then during long work with (done, total) in bytes or steps;
// prepare uses it to draw a progress line.
using Progress = std::function<void(int64_t done, int64_t total)>;

class ChunkCache;

// An immutable tokenizer: copies are cheap, and encode may be called from
// several threads at once.
class Tokenizer {
 public:
  // Token ids of `text`. Throws tg::DataError when the text cannot be encoded:
  // invalid UTF-8 (char, gpt2) or a character outside a char vocabulary; the
  // message names the character and its byte offset. byte and bpe accept any
  // bytes and round-trip them exactly: decode(encode(x)) == x.
  std::vector<int32_t> encode(std::string_view text, const Progress& progress = nullptr) const;
  // The same ids appended to `out`, through a cache of encoded chunks that the
  // caller keeps across calls (one per thread; see chunk_cache.h).
  void encode_append(std::string_view text, std::vector<int32_t>& out, ChunkCache& cache,
                     const Progress& progress = nullptr) const;

  // The bytes the ids stand for (not necessarily valid UTF-8 for byte, bpe and
  // gpt2). Throws tg::DataError naming the first id outside [0, vocab_size).
  std::string decode(const int32_t* ids, size_t n) const;
  std::string decode(const std::vector<int32_t>& ids) const { return decode(ids.data(), ids.size()); }

  // The raw bytes of one token; id must be in [0, vocab_size) (DataError if not).
  const std::string& token_bytes(int32_t id) const;

  int32_t vocab_size() const;
  const std::string& type() const;
  const TokenizerSpec& spec() const;  // what a checkpoint stores to rebuild this tokenizer

  struct Impl;  // defined in tokenizer_impl.h

 private:
  friend Tokenizer make_tokenizer(const TokenizerSpec& spec);
  std::shared_ptr<const Impl> impl_;
};

// Builds a tokenizer from a spec, validating it as untrusted input (it may
// come from a corrupt or hostile checkpoint or tokenizer.json): known type,
// sane sizes, byte tokens where they must be, merge ids in range and naming
// an existing merged token. Throws tg::DataError saying what is wrong.
Tokenizer make_tokenizer(const TokenizerSpec& spec);

// The char vocabulary of a corpus, nanoGPT style: its distinct Unicode code
// points, sorted (65 for Tiny Shakespeare). DataError on invalid UTF-8.
TokenizerSpec char_spec_from_text(std::string_view text);

// The 256 single-byte tokens; id == byte value.
TokenizerSpec byte_spec();

// Sanity limits on any spec (far above GPT-2's 50257 tokens).
constexpr int64_t kMaxVocabSize = int64_t{1} << 24;
constexpr int64_t kMaxTokenBytes = int64_t{1} << 16;

}  // namespace data
