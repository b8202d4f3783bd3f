// Tokenizer encode/decode for each type, and the char and byte specs.
#include "data/tokenizer.h"

#include <algorithm>
#include <set>

#include "autograd/base/errors.h"
#include "data/bpe_split.h"
#include "data/chunk_cache.h"
#include "data/gpt2_split.h"
#include "data/tokenizer_impl.h"
#include "data/utf8.h"

namespace data {
namespace {

constexpr int64_t kProgressEvery = int64_t{1} << 20;

void check_utf8(std::string_view text, const std::string& type) {
  const size_t bad = utf8_invalid_at(text);
  if (bad != std::string_view::npos) {
    throw tg::DataError("the " + type + " tokenizer needs UTF-8 text, but byte " + std::to_string(bad) +
                        " starts an invalid UTF-8 sequence; convert the text to UTF-8 or use the byte or bpe tokenizer");
  }
}

// Appends the BPE ids of one chunk, through the caller's cache.
void encode_chunk(const Tokenizer::Impl& t, std::string_view chunk, std::vector<int32_t>& out, ChunkCache& cache) {
  size_t n = 0;
  if (const int32_t* ids = cache.find(chunk, n)) {
    out.insert(out.end(), ids, ids + n);
    return;
  }
  const size_t before = out.size();
  bpe_merge_chunk(t.merges, chunk, out);
  cache.insert(chunk, out.data() + before, out.size() - before);
}

// Calls progress every kProgressEvery bytes of text consumed.
struct ProgressTicker {
  const Progress& progress;
  int64_t total;
  int64_t next = kProgressEvery;
  void at(int64_t done) {
    if (progress && done >= next) {
      progress(done, total);
      next = done + kProgressEvery;
    }
  }
  void finish() {
    if (progress) progress(total, total);
  }
};

}  // namespace

std::vector<int32_t> Tokenizer::encode(std::string_view text, const Progress& progress) const {
  std::vector<int32_t> out;
  ChunkCache cache(std::min<size_t>(size_t{1} << 16, text.size() / 4 + 16));  // short texts, small table
  encode_append(text, out, cache, progress);
  return out;
}

void Tokenizer::encode_append(std::string_view text, std::vector<int32_t>& out, ChunkCache& cache,
                              const Progress& progress) const {
  const Impl& t = *impl_;
  ProgressTicker ticker{progress, static_cast<int64_t>(text.size())};
  switch (t.kind) {
    case TokenizerKind::kByte:
      out.reserve(out.size() + text.size());
      for (char c : text) out.push_back(static_cast<unsigned char>(c));
      break;
    case TokenizerKind::kChar: {
      check_utf8(text, "char");
      out.reserve(out.size() + text.size());
      for (size_t i = 0; i < text.size();) {
        const size_t at = i;
        const uint32_t cp = utf8_next(text, i);
        auto it = t.char_ids.find(cp);
        if (it == t.char_ids.end()) {
          throw tg::DataError("character " + utf8_describe(cp) + " at byte " + std::to_string(at) +
                              " is not in the char vocabulary (" + std::to_string(t.spec.tokens.size()) +
                              " characters seen in the training corpus); remove it from the text");
        }
        out.push_back(it->second);
        ticker.at(static_cast<int64_t>(i));
      }
      break;
    }
    case TokenizerKind::kBpe:
      out.reserve(out.size() + text.size() / 3);
      bpe_split(t.spec.split, text, [&](size_t begin, size_t end) {
        encode_chunk(t, text.substr(begin, end - begin), out, cache);
        ticker.at(static_cast<int64_t>(end));
      });
      break;
    case TokenizerKind::kGpt2:
      check_utf8(text, "gpt2");
      out.reserve(out.size() + text.size() / 3);
      gpt2_split(text, [&](size_t begin, size_t end) {
        encode_chunk(t, text.substr(begin, end - begin), out, cache);
        ticker.at(static_cast<int64_t>(end));
      });
      break;
  }
  ticker.finish();
}

std::string Tokenizer::decode(const int32_t* ids, size_t n) const {
  const auto& tokens = impl_->spec.tokens;
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || static_cast<size_t>(ids[i]) >= tokens.size()) {
      throw tg::DataError("token id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                          " is outside the vocabulary of " + std::to_string(tokens.size()) +
                          " tokens; ids must be in [0, " + std::to_string(tokens.size()) + ")");
    }
    out += tokens[ids[i]];
  }
  return out;
}

const std::string& Tokenizer::token_bytes(int32_t id) const {
  const auto& tokens = impl_->spec.tokens;
  if (id < 0 || static_cast<size_t>(id) >= tokens.size()) {
    throw tg::DataError("token id " + std::to_string(id) + " is outside the vocabulary of " +
                        std::to_string(tokens.size()) + " tokens");
  }
  return tokens[id];
}

int32_t Tokenizer::vocab_size() const { return static_cast<int32_t>(impl_->spec.tokens.size()); }
const std::string& Tokenizer::type() const { return impl_->spec.type; }
const TokenizerSpec& Tokenizer::spec() const { return impl_->spec; }

TokenizerSpec char_spec_from_text(std::string_view text) {
  check_utf8(text, "char");
  // A bitmap over all code points is 136 KiB and makes this one fast pass.
  std::vector<bool> seen(0x110000, false);
  for (size_t i = 0; i < text.size();) seen[utf8_next(text, i)] = true;
  TokenizerSpec spec;
  spec.type = "char";
  for (uint32_t cp = 0; cp < seen.size(); ++cp) {
    if (seen[cp]) spec.tokens.push_back(utf8_encode(cp));
  }
  return spec;
}

TokenizerSpec byte_spec() {
  TokenizerSpec spec;
  spec.type = "byte";
  for (int b = 0; b < 256; ++b) spec.tokens.push_back(std::string(1, static_cast<char>(b)));
  return spec;
}

}  // namespace data
