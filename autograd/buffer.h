// FloatBuffer: an owned, 64-byte-aligned, zero-initialised array of floats.
// The one way tapegpt holds large float storage (parameters, moments, arena);
// Bf16Buffer holds bf16 values (Note [bf16 matmuls]) in one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include <sys/mman.h>

namespace autograd {

class FloatBuffer {
 public:
  FloatBuffer() = default;
  explicit FloatBuffer(int64_t n) { resize(n); }
  FloatBuffer(const FloatBuffer&) = delete;
  FloatBuffer& operator=(const FloatBuffer&) = delete;
  FloatBuffer(FloatBuffer&& o) noexcept { swap(o); }
  FloatBuffer& operator=(FloatBuffer&& o) noexcept { swap(o); return *this; }
  ~FloatBuffer() { std::free(data_); }

  // Discards the old contents; the new contents are all zero.
  void resize(int64_t n) {
    std::free(data_);
    data_ = nullptr;
    size_ = 0;
    if (n <= 0) return;
    const size_t align = static_cast<size_t>(n) * sizeof(float) >= kHugeFrom ? kHugePage : 64;
    const size_t bytes = (static_cast<size_t>(n) * sizeof(float) + align - 1) / align * align;
    data_ = static_cast<float*>(std::aligned_alloc(align, bytes));
    if (!data_) throw std::bad_alloc();
    // Note [Huge pages]: a large buffer asks the kernel for 2 MiB pages
    // (Linux's transparent huge pages, where enabled for madvise): its
    // first touch then costs one page fault per 2 MiB, not per 4 KiB. A
    // first pass over fresh memory (a prompt, a first step, a checkpoint
    // loading) was paying more for the faults than for its arithmetic.
    if (align == kHugePage) madvise(data_, bytes, MADV_HUGEPAGE);  // advice: failure changes nothing
    std::memset(data_, 0, bytes);
    size_ = n;
  }
  void zero() { if (size_) std::memset(data_, 0, static_cast<size_t>(size_) * sizeof(float)); }

  float* data() { return data_; }
  const float* data() const { return data_; }
  int64_t size() const { return size_; }
  float& operator[](int64_t i) { return data_[i]; }
  const float& operator[](int64_t i) const { return data_[i]; }

 private:
  static constexpr size_t kHugePage = size_t{2} << 20;
  static constexpr size_t kHugeFrom = size_t{4} << 20;  // smaller buffers waste less as 4 KiB pages
  void swap(FloatBuffer& o) { std::swap(data_, o.data_); std::swap(size_, o.size_); }
  float* data_ = nullptr;
  int64_t size_ = 0;
};

// n bf16 values (their bits, uint16_t), two to a float of a FloatBuffer:
// aligned as it is. Empty until resized.
class Bf16Buffer {
 public:
  void resize(int64_t n) {
    words_.resize((n + 1) / 2);
    size_ = n > 0 ? n : 0;
  }
  uint16_t* data() { return reinterpret_cast<uint16_t*>(words_.data()); }
  const uint16_t* data() const { return reinterpret_cast<const uint16_t*>(words_.data()); }
  int64_t size() const { return size_; }

 private:
  FloatBuffer words_;
  int64_t size_ = 0;
};

}  // namespace autograd
