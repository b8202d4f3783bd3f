// Plain and compressed input reading (see byte_reader.h). Each format is a
// Decoder that turns raw file bytes into text bytes; the libraries do the
// decompression, this file only feeds them and names their errors.
#include "data/byte_reader.h"

#include <fcntl.h>
#include <lzma.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "autograd/base/errors.h"

namespace data {

struct ByteReader::Decoder {
  virtual ~Decoder() = default;
  virtual size_t read(char* dst, size_t n) = 0;
  virtual const char* name() const = 0;
};

namespace {

constexpr size_t kRawBlock = size_t{1} << 18;

// Raw bytes of the file, read in blocks, with the first few bytes peeked.
class RawInput {
 public:
  RawInput(int fd, std::string path) : fd_(fd), path_(std::move(path)), buf_(kRawBlock) {}
  // Refills when empty; false at end of file.
  bool fill() {
    if (pos_ < len_) return true;
    for (;;) {
      const ssize_t got = ::read(fd_, buf_.data(), buf_.size());
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw tg::DataError("input " + path_ + ": reading failed (" + std::strerror(errno) + ")");
      pos_ = 0;
      len_ = static_cast<size_t>(got);
      return got > 0;
    }
  }
  const char* data() const { return buf_.data() + pos_; }
  size_t size() const { return len_ - pos_; }
  void consume(size_t n) { pos_ += n; }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
  std::vector<char> buf_;
  size_t pos_ = 0, len_ = 0;
};

[[noreturn]] void corrupt(const std::string& path, const char* format, const std::string& why) {
  throw tg::DataError("input " + path + ": the " + format + " data is corrupt or truncated (" + why +
                      "); check the file, e.g. with " + format + " -t");
}

class PlainDecoder : public ByteReader::Decoder {
 public:
  explicit PlainDecoder(RawInput& in) : in_(in) {}
  size_t read(char* dst, size_t n) override {
    if (!in_.fill()) return 0;
    const size_t m = std::min(n, in_.size());
    std::memcpy(dst, in_.data(), m);
    in_.consume(m);
    return m;
  }
  const char* name() const override { return ""; }

 private:
  RawInput& in_;
};

// zlib with gzip wrapping; concatenated members (as `cat a.gz b.gz`) are read
// one after the other, like gzip -d does.
class GzipDecoder : public ByteReader::Decoder {
 public:
  explicit GzipDecoder(RawInput& in) : in_(in) {
    if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) throw tg::DataError("input " + in.path() + ": zlib failed to start");
  }
  ~GzipDecoder() override { inflateEnd(&z_); }
  size_t read(char* dst, size_t n) override {
    const auto want = static_cast<uInt>(std::min<size_t>(n, size_t{1} << 30));
    z_.next_out = reinterpret_cast<Bytef*>(dst);
    z_.avail_out = want;
    while (z_.avail_out == want) {  // until some output, or the end
      const bool more = in_.fill();
      if (!more && !in_member_) break;  // the end, between members
      // At the end of the file zlib may still hold output of the member.
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in_.data()));
      z_.avail_in = more ? static_cast<uInt>(in_.size()) : 0;
      in_member_ = true;
      const int rc = inflate(&z_, Z_NO_FLUSH);
      if (more) in_.consume(in_.size() - z_.avail_in);
      if (rc == Z_STREAM_END) {
        in_member_ = false;
        inflateReset(&z_);
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        corrupt(in_.path(), "gzip", z_.msg ? z_.msg : "zlib error " + std::to_string(rc));
      } else if (!more && z_.avail_out == want) {
        corrupt(in_.path(), "gzip", "unexpected end of file");
      }
    }
    return want - z_.avail_out;
  }
  const char* name() const override { return "gzip"; }

 private:
  RawInput& in_;
  z_stream z_{};
  bool in_member_ = false;
};

class XzDecoder : public ByteReader::Decoder {
 public:
  explicit XzDecoder(RawInput& in) : in_(in) {
    if (lzma_stream_decoder(&s_, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
      throw tg::DataError("input " + in.path() + ": liblzma failed to start");
    }
  }
  ~XzDecoder() override { lzma_end(&s_); }
  size_t read(char* dst, size_t n) override {
    s_.next_out = reinterpret_cast<uint8_t*>(dst);
    s_.avail_out = n;
    while (s_.avail_out == n && !done_) {
      lzma_action action = LZMA_RUN;
      if (!in_.fill()) action = LZMA_FINISH;
      s_.next_in = reinterpret_cast<const uint8_t*>(in_.data());
      s_.avail_in = in_.size();
      const lzma_ret rc = lzma_code(&s_, action);
      in_.consume(in_.size() - s_.avail_in);
      if (rc == LZMA_STREAM_END) {
        done_ = true;
      } else if (rc != LZMA_OK) {
        corrupt(in_.path(), "xz", "liblzma error " + std::to_string(static_cast<int>(rc)));
      } else if (action == LZMA_FINISH && s_.avail_out == n) {
        corrupt(in_.path(), "xz", "unexpected end of file");
      }
    }
    return n - s_.avail_out;
  }
  const char* name() const override { return "xz"; }

 private:
  RawInput& in_;
  lzma_stream s_ = LZMA_STREAM_INIT;
  bool done_ = false;
};

// libzstd's streaming API reads any number of concatenated frames.
class ZstdDecoder : public ByteReader::Decoder {
 public:
  explicit ZstdDecoder(RawInput& in) : in_(in), ctx_(ZSTD_createDCtx()) {
    if (ctx_ == nullptr) throw tg::DataError("input " + in.path() + ": libzstd failed to start");
  }
  ~ZstdDecoder() override { ZSTD_freeDCtx(ctx_); }
  size_t read(char* dst, size_t n) override {
    ZSTD_outBuffer out{dst, n, 0};
    while (out.pos == 0) {
      const bool more = in_.fill();
      if (!more && !frame_open_) break;  // the end, between frames
      // At the end of the file libzstd may still hold output of the frame.
      ZSTD_inBuffer inb{in_.data(), more ? in_.size() : 0, 0};
      const size_t rc = ZSTD_decompressStream(ctx_, &out, &inb);
      if (ZSTD_isError(rc)) corrupt(in_.path(), "zstd", ZSTD_getErrorName(rc));
      if (more) in_.consume(inb.pos);
      frame_open_ = rc != 0;
      if (!more && out.pos == 0 && frame_open_) corrupt(in_.path(), "zstd", "unexpected end of file");
    }
    return out.pos;
  }
  const char* name() const override { return "zstd"; }

 private:
  RawInput& in_;
  ZSTD_DCtx* ctx_;
  bool frame_open_ = false;
};

}  // namespace

// The raw input outlives its decoder: both live in this holder.
struct ReaderParts : ByteReader::Decoder {
  RawInput raw;
  std::unique_ptr<ByteReader::Decoder> inner;
  ReaderParts(int fd, const std::string& path) : raw(fd, path) {}
  size_t read(char* dst, size_t n) override { return inner->read(dst, n); }
  const char* name() const override { return inner->name(); }
};

ByteReader::ByteReader(const std::string& path, int fd) : path_(path), fd_(fd) {
  if (fd_ < 0) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw tg::DataError("input " + path + " cannot be read (" + std::strerror(errno) + "); check the path");
    own_fd_ = true;
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      throw tg::DataError("input " + path + " is not a regular file; give files, directories or globs, or pipe it in with --input -");
    }
  } else if (::lseek(fd_, 0, SEEK_SET) != 0) {
    throw tg::DataError("input " + path + ": cannot seek to its start (" + std::strerror(errno) + ")");
  }
  auto parts = std::make_unique<ReaderParts>(fd_, path);
  RawInput& raw = parts->raw;
  const unsigned char* m = nullptr;
  size_t have = 0;
  if (raw.fill()) {
    m = reinterpret_cast<const unsigned char*>(raw.data());
    have = raw.size();
  }
  auto starts = [&](std::initializer_list<unsigned char> magic) {
    if (have < magic.size()) return false;
    size_t i = 0;
    for (unsigned char b : magic) {
      if (m[i++] != b) return false;
    }
    return true;
  };
  if (starts({0x1f, 0x8b})) parts->inner = std::make_unique<GzipDecoder>(raw);
  else if (starts({0xfd, '7', 'z', 'X', 'Z', 0x00})) parts->inner = std::make_unique<XzDecoder>(raw);
  else if (starts({0x28, 0xb5, 0x2f, 0xfd})) parts->inner = std::make_unique<ZstdDecoder>(raw);
  else parts->inner = std::make_unique<PlainDecoder>(raw);
  decoder_ = std::move(parts);
}

ByteReader::~ByteReader() {
  decoder_.reset();
  if (own_fd_) ::close(fd_);
}

size_t ByteReader::read(char* dst, size_t n) { return n == 0 ? 0 : decoder_->read(dst, n); }

const char* ByteReader::compression() const { return decoder_->name(); }

}  // namespace data
