// File header, block index and payload decoding of the lowalloc trace format.
#include "analyze/trace_reader.hpp"

#include "analyze/model.hpp"
#include "trace/format.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

namespace lowalloc::analyze::detail {

namespace fmt = lowalloc::trace_format;

namespace {

std::uint32_t load_u32(const std::uint8_t* p) noexcept {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}

std::uint16_t load_u16(const std::uint8_t* p) noexcept {
  return static_cast<std::uint16_t>(p[0] | p[1] << 8);
}

}  // namespace

file_index index_blocks(const std::uint8_t* data, std::size_t size, const file_bytes* file) {
  // A file that begins as a trace does but ends within the header is a trace cut short (the
  // program was killed as it started, or the file was copied while it was written).
  const std::size_t magic_bytes = std::min<std::size_t>(size, sizeof fmt::file_magic);
  if (size == 0) throw trace_error("not a lowalloc trace file: it is empty");
  if (std::memcmp(data, fmt::file_magic, magic_bytes) != 0)
    throw trace_error("not a lowalloc trace file", 0);
  if (size < fmt::file_header_size)
    throw trace_error("a truncated lowalloc trace (" + std::to_string(size) +
                      (size == 1 ? " byte)" : " bytes)"));
  file_index index;
  index.version = load_u16(data + 8);
  if (index.version < fmt::oldest_version || index.version > fmt::version)
    throw trace_error("trace format version " + std::to_string(index.version) +
                          "; this lowalloc reads versions " + std::to_string(fmt::oldest_version) +
                          " to " + std::to_string(fmt::version),
                      8);
  const std::uint16_t header_size = load_u16(data + 10);
  if (header_size < fmt::file_header_size || header_size > size)
    throw trace_error("damaged file header: header size " + std::to_string(header_size), 10);

  std::uint64_t offset = header_size;
  // The headers read so far are released every few MiB: a large file is indexed with little of
  // it resident.
  constexpr std::uint64_t release_every = 4 << 20;
  std::uint64_t released = 0;
  const auto stop = [&](std::string what) {
    index.damaged = true;
    index.damage = std::move(what);
    index.damage_offset = offset;
  };
  while (offset < size) {
    const std::uint64_t left = size - offset;
    if (left < fmt::block_header_size) {
      stop("block header cut short: " + std::to_string(left) + " of " +
           std::to_string(fmt::block_header_size) + " bytes");
      break;
    }
    const std::uint8_t* h = data + offset;
    block_ref b;
    b.offset = offset;
    b.compressed = load_u32(h + 4);
    b.decompressed = load_u32(h + 8);
    b.stream = load_u32(h + 12);
    b.prefixed = (b.stream & fmt::stream_prefixed) != 0 && index.version >= 4;
    if (b.prefixed) b.stream &= ~fmt::stream_prefixed;
    if (load_u32(h) != fmt::block_magic) {
      stop("bad block magic");
      break;
    }
    if (b.compressed > fmt::max_block_bytes || b.decompressed > fmt::max_block_bytes) {
      stop("block size over the limit: " + std::to_string(b.compressed) + " compressed, " +
           std::to_string(b.decompressed) + " decompressed bytes (at most " +
           std::to_string(fmt::max_block_bytes) + ")");
      break;
    }
    if (b.compressed > left - fmt::block_header_size) {
      stop("block cut short: payload of " + std::to_string(b.compressed) + " bytes, " +
           std::to_string(left - fmt::block_header_size) + " left in the file");
      break;
    }
    index.blocks.push_back(b);
    offset += fmt::block_header_size + std::uint64_t{b.compressed};
    if (file != nullptr && offset - released >= release_every) {
      file->release(data + released, offset - released);
      released = offset;
    }
  }
  if (file != nullptr) file->release(data + released, offset - released);
  return index;
}

std::string_view payload_reader::string() {
  const std::uint64_t n = varint();
  if (n > fmt::max_string_bytes)
    throw payload_error("string of " + std::to_string(n) + " bytes over the limit of " +
                        std::to_string(fmt::max_string_bytes));
  if (n > remaining()) throw_past_end();
  const auto* s = reinterpret_cast<const char*>(p_);
  p_ += n;
  return {s, static_cast<std::size_t>(n)};
}

std::uint64_t payload_reader::count(std::size_t min_bytes) {
  const std::uint64_t n = varint();
  if (n > remaining() / min_bytes) throw_past_end();
  return n;
}

std::uint64_t payload_reader::varint_slow() {
  std::uint64_t v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (p_ == end_) throw_past_end();
    const std::uint8_t b = *p_++;
    v |= std::uint64_t{b & 0x7Fu} << shift;
    if ((b & 0x80u) == 0) {
      if (shift == 63 && b > 1) throw_overflow();
      return v;
    }
  }
  throw_overflow();
}

void payload_reader::fail(const char* what) { throw payload_error(what); }

void payload_reader::throw_past_end() {
  throw payload_error("record runs past the end of the block payload");
}

void payload_reader::throw_overflow() {
  throw payload_error("varint overflow (more than 64 bits)");
}

decompressor::decompressor() : ctx_(ZSTD_createDCtx()) {
  if (ctx_ == nullptr) throw std::bad_alloc();
}

decompressor::~decompressor() { ZSTD_freeDCtx(ctx_); }

void decompressor::decompress(const std::uint8_t* file, const block_ref& block, std::uint8_t* out,
                              const std::uint8_t* prefix, std::size_t prefix_size) {
  const std::uint8_t* src = file + block.offset + fmt::block_header_size;
  const std::size_t frame = ZSTD_findFrameCompressedSize(src, block.compressed);
  if (ZSTD_isError(frame))
    throw payload_error(std::string("damaged zstd frame: ") + ZSTD_getErrorName(frame));
  if (frame != block.compressed)
    throw payload_error("the zstd frame is " + std::to_string(frame) + " bytes, the block " +
                        std::to_string(block.compressed));
  const unsigned long long content = ZSTD_getFrameContentSize(src, block.compressed);
  if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != block.decompressed)
    throw payload_error("the zstd frame holds " + std::to_string(content) +
                        " bytes, the block header says " + std::to_string(block.decompressed));
  if (block.prefixed) {
    if (prefix == nullptr)
      throw payload_error(
          "the block is compressed against its stream's previous block, and the "
          "stream has none");
    ZSTD_DCtx_refPrefix(ctx_, prefix, prefix_size);  // for this frame only
  }
  const std::size_t n = ZSTD_decompressDCtx(ctx_, out, block.decompressed, src, block.compressed);
  if (block.prefixed) ZSTD_DCtx_reset(ctx_, ZSTD_reset_session_and_parameters);
  if (ZSTD_isError(n))
    throw payload_error(std::string("payload does not decompress (zstd: ") + ZSTD_getErrorName(n) +
                        ")");
  if (n != block.decompressed)
    throw payload_error("payload decompresses to " + std::to_string(n) +
                        " bytes, the block header says " + std::to_string(block.decompressed));
}

file_bytes::file_bytes(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw trace_error(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        map_ = p;
        data_ = static_cast<const std::uint8_t*>(p);
        ::close(fd);
        return;
      }
    }
  }
  // Not a regular file, or mmap failed: read it all. The magic is checked as soon as it is in:
  // an endless stream that is not a trace (/dev/zero, `yes |`) would be read until memory ran
  // out.
  std::uint8_t chunk[1 << 16];
  bool magic_checked = false;
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw trace_error(std::string("cannot read: ") + std::strerror(err));
    }
    if (n == 0) break;
    copy_.insert(copy_.end(), chunk, chunk + n);
    if (!magic_checked && copy_.size() >= sizeof fmt::file_magic) {
      magic_checked = true;
      if (std::memcmp(copy_.data(), fmt::file_magic, sizeof fmt::file_magic) != 0) {
        ::close(fd);
        throw trace_error("not a lowalloc trace file", 0);
      }
    }
  }
  ::close(fd);
  data_ = copy_.data();
  size_ = copy_.size();
}

file_bytes::~file_bytes() {
  if (map_ != nullptr) ::munmap(map_, size_);
}

void file_bytes::release(const std::uint8_t* p, std::size_t n) const noexcept {
  if (map_ == nullptr || n == 0) return;
  // A private, read-only mapping of a file: dropped pages are read from the file again, never
  // lost. Every page that holds part of the range goes, and the 256 KiB before it: a fault maps
  // the pages around the one it needs (64 KiB on Linux), so reading a block maps again pages of
  // blocks released before it, and they would stay.
  constexpr std::uintptr_t behind = 256 * 1024;
  static const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto base = reinterpret_cast<std::uintptr_t>(map_);
  const auto start = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t lo = (start - base > behind ? start - behind : base) & ~(page - 1);
  ::madvise(reinterpret_cast<void*>(lo), start + n - lo, MADV_DONTNEED);
}

}  // namespace lowalloc::analyze::detail
