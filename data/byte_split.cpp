// Byte-class chunking for our BPE (Note [Byte-class chunks] in byte_split.h).
#include "data/byte_split.h"

namespace data {
namespace {

enum ByteClass : unsigned char { kLetter, kDigit, kSpace, kPunct };

ByteClass byte_class(unsigned char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80) return kLetter;
  if (c >= '0' && c <= '9') return kDigit;
  if (c == ' ' || (c >= '\t' && c <= '\r')) return kSpace;
  return kPunct;
}

}  // namespace

size_t byte_chunk_end(std::string_view text, size_t begin) {
  const size_t n = text.size();
  auto cls = [&](size_t i) { return byte_class(static_cast<unsigned char>(text[i])); };
  size_t i = begin;
  // " word": one space glued to the run of one class that follows it.
  if (text[i] == ' ' && i + 1 < n && cls(i + 1) != kSpace) ++i;
  const ByteClass c = cls(i);
  size_t j = i + 1;
  while (j < n && cls(j) == c) ++j;
  if (c == kSpace && j < n && j - begin >= 2 && text[j - 1] == ' ') --j;
  return j;
}

}  // namespace data
