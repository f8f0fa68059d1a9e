// The lowest layer of the analyzer: the file's bytes, its header, the block index, and the
// primitives that trace/records.hpp decodes records with (docs/trace-format.md). Not part of
// lowalloc's API.
//
// Reading never trusts a length field: block sizes are checked against the format's limits and
// against what is left of the file before anything is allocated, strings and counts against
// what is left of the payload.
#ifndef LOWALLOC_SRC_ANALYZE_TRACE_READER_HPP
#define LOWALLOC_SRC_ANALYZE_TRACE_READER_HPP

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

struct ZSTD_DCtx_s;

namespace lowalloc::analyze::detail {

/// One block header that passed the checks: where its payload is and how big it claims to be.
struct block_ref {
  std::uint64_t offset = 0;  // file offset of the block header
  std::uint32_t compressed = 0;
  std::uint32_t decompressed = 0;
  std::uint32_t stream = 0;
  bool prefixed = false;  // compressed against the stream's previous block (stream_prefixed)
};

struct file_index {
  std::uint16_t version = 0;
  std::vector<block_ref> blocks;  // in file order, up to the first bad block header
  bool damaged = false;           // the walk stopped on a bad block header
  std::string damage;             // what is wrong with it
  std::uint64_t damage_offset = 0;
};

class file_bytes;

/// Checks the file header (throws trace_error: not a trace, unknown version) and walks the
/// block headers without decompressing anything. With `file`, the mapping `data` is, the pages
/// it read are released as it goes.
file_index index_blocks(const std::uint8_t* data, std::size_t size,
                        const file_bytes* file = nullptr);

/// A record that cannot be decoded; the message says what, the caller adds where.
class payload_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Decodes the fields of records from one decompressed payload.
class payload_reader {
 public:
  payload_reader() = default;
  payload_reader(const std::uint8_t* begin, const std::uint8_t* end) noexcept
      : begin_(begin), p_(begin), end_(end) {}

  bool done() const noexcept { return p_ == end_; }
  std::size_t position() const noexcept { return static_cast<std::size_t>(p_ - begin_); }
  std::size_t remaining() const noexcept { return static_cast<std::size_t>(end_ - p_); }

  std::uint8_t byte() {
    if (p_ == end_) throw_past_end();
    return *p_++;
  }

  std::uint64_t varint() {
    // Fast path: ten bytes available, no bound check per byte.
    if (remaining() >= 10) {
      std::uint64_t v = 0;
      for (unsigned shift = 0; shift < 64; shift += 7) {
        const std::uint8_t b = *p_++;
        v |= std::uint64_t{b & 0x7Fu} << shift;
        if ((b & 0x80u) == 0) {
          if (shift == 63 && b > 1) throw_overflow();
          return v;
        }
      }
      throw_overflow();
    }
    return varint_slow();
  }

  std::int64_t svarint() {
    const std::uint64_t u = varint();
    return static_cast<std::int64_t>(u >> 1) ^ -static_cast<std::int64_t>(u & 1);
  }

  /// A string: its bytes stay in the payload, valid as long as the payload is.
  std::string_view string();

  /// A count of items that each take at least `min_bytes` bytes: larger than what is left means
  /// the record runs past the payload (and nothing is sized from it).
  std::uint64_t count(std::size_t min_bytes);

  /// A record that breaks a rule of the format (records.hpp's decoder calls this).
  [[noreturn]] static void fail(const char* what);

  [[noreturn]] static void throw_past_end();
  [[noreturn]] static void throw_overflow();

 private:
  std::uint64_t varint_slow();

  const std::uint8_t* begin_ = nullptr;
  const std::uint8_t* p_ = nullptr;
  const std::uint8_t* end_ = nullptr;
};

/// Decompresses block payloads; reuses one zstd context.
class decompressor {
 public:
  decompressor();
  ~decompressor();
  decompressor(const decompressor&) = delete;
  decompressor& operator=(const decompressor&) = delete;

  /// Decompresses `block` of the file into `out` (at least block.decompressed bytes); a prefixed
  /// block with `prefix`, the payload of its stream's previous block (null if there is none).
  /// Throws payload_error for a zstd error, a checksum failure, a size that differs from the
  /// header or a prefixed block without a previous one.
  void decompress(const std::uint8_t* file, const block_ref& block, std::uint8_t* out,
                  const std::uint8_t* prefix = nullptr, std::size_t prefix_size = 0);

 private:
  ZSTD_DCtx_s* ctx_;
};

/// A file's bytes: mapped, or read when it cannot be mapped (a pipe). Throws trace_error when
/// the file cannot be opened or read.
class file_bytes {
 public:
  explicit file_bytes(const std::string& path);
  ~file_bytes();
  file_bytes(const file_bytes&) = delete;
  file_bytes& operator=(const file_bytes&) = delete;

  const std::uint8_t* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

  /// Lets the kernel drop the mapped pages that hold [p, p + n), which this process has read and
  /// may not read again soon: read again, they come back from the file. So a trace larger than
  /// memory is read with a few pages of it resident. Nothing for a file read into memory.
  void release(const std::uint8_t* p, std::size_t n) const noexcept;

 private:
  void* map_ = nullptr;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::vector<std::uint8_t> copy_;
};

}  // namespace lowalloc::analyze::detail

#endif
