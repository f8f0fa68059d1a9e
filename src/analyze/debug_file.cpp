// Inflating the compressed sections of a debug file into an in-memory copy (debug_file.hpp).
#include "analyze/debug_file.hpp"

#include <elf.h>
#include <libdeflate.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

namespace lowalloc::analyze::detail {

namespace {

class mapping {
 public:
  mapping(std::size_t size, int prot, int flags, int fd) : size_(size) {
    void* p = ::mmap(nullptr, size, prot, flags, fd, 0);
    if (p != MAP_FAILED) bytes_ = static_cast<unsigned char*>(p);
  }
  ~mapping() {
    if (bytes_ != nullptr) ::munmap(bytes_, size_);
  }
  mapping(const mapping&) = delete;
  mapping& operator=(const mapping&) = delete;
  unsigned char* bytes() const noexcept { return bytes_; }

 private:
  unsigned char* bytes_ = nullptr;
  std::size_t size_;
};

// One compressed section: its zlib stream in the original, and where its inflated bytes go in
// the copy.
struct inflation {
  std::size_t section = 0;  // index in the section header table
  std::uint64_t from = 0;   // the stream, after the compression header
  std::uint64_t from_size = 0;
  std::uint64_t to = 0;
  std::uint64_t size = 0;  // the compression header's ch_size
  std::uint64_t align = 1;
};

// Inflates every section of `work`, the largest first, on this thread and (when there is enough
// to share) one more; false if any fails or does not give exactly its size.
bool inflate_all(const unsigned char* in, unsigned char* out, std::vector<inflation>& work) {
  std::sort(work.begin(), work.end(),
            [](const inflation& a, const inflation& b) { return a.from_size > b.from_size; });
  std::atomic<std::size_t> next{0};
  std::atomic<bool> ok{true};
  const auto inflate_some = [&] {
    libdeflate_decompressor* d = libdeflate_alloc_decompressor();
    if (d == nullptr) {
      ok = false;
      return;
    }
    for (std::size_t i; ok && (i = next.fetch_add(1)) < work.size();) {
      const inflation& w = work[i];
      std::size_t got = 0;
      if (libdeflate_zlib_decompress(d, in + w.from, w.from_size, out + w.to, w.size, &got) !=
              LIBDEFLATE_SUCCESS ||
          got != w.size)
        ok = false;
    }
    libdeflate_free_decompressor(d);
  };
  // libc's debug file holds 3.8 MB of compressed sections, .debug_info 2.3 MB of them: two
  // threads inflate it in the time of .debug_info alone. A thread costs more than a small file.
  constexpr std::uint64_t worth_a_thread = 256 << 10;
  std::uint64_t compressed = 0;
  for (const inflation& w : work) compressed += w.from_size;
  if (work.size() > 1 && compressed >= worth_a_thread) {
    try {
      std::thread helper(inflate_some);
      inflate_some();
      helper.join();
      return ok;
    } catch (const std::system_error&) {
      // No thread: this one does it all.
    }
  }
  inflate_some();
  return ok;
}

std::uint64_t align_up(std::uint64_t n, std::uint64_t align) {
  return (n + align - 1) / align * align;
}

}  // namespace

int inflate_debug_file(int fd) {
  if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < sizeof(Elf64_Ehdr)) return -1;
  const mapping original(static_cast<std::size_t>(size), PROT_READ, MAP_PRIVATE, fd);
  const unsigned char* in = original.bytes();
  if (in == nullptr) return -1;

  Elf64_Ehdr eh;
  std::memcpy(&eh, in, sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      eh.e_shnum == 0 || eh.e_shoff > size || (size - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum)
    return -1;
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  std::memcpy(sections.data(), in + eh.e_shoff, sections.size() * sizeof(Elf64_Shdr));

  // The name of section i, empty when it cannot be read.
  const auto name_of = [&](std::size_t i) {
    if (eh.e_shstrndx == SHN_UNDEF || eh.e_shstrndx >= sections.size()) return std::string_view();
    const Elf64_Shdr& names = sections[eh.e_shstrndx];
    if (names.sh_offset > size || names.sh_size > size - names.sh_offset ||
        sections[i].sh_name >= names.sh_size)
      return std::string_view();
    const char* first = reinterpret_cast<const char*>(in + names.sh_offset + sections[i].sh_name);
    const void* end = std::memchr(first, '\0', names.sh_size - sections[i].sh_name);
    return end == nullptr
               ? std::string_view()
               : std::string_view(first,
                                  static_cast<std::size_t>(static_cast<const char*>(end) - first));
  };
  std::vector<inflation> work;
  std::vector<std::size_t> dropped;
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const Elf64_Shdr& s = sections[i];
    if ((s.sh_flags & SHF_COMPRESSED) == 0 || s.sh_type == SHT_NOBITS) continue;
    // What symbolization never reads is left out (empty in the copy): variables' locations,
    // macros, call frames, name indexes. libc's location lists are a sixth of its debug file.
    if (const std::string_view name = name_of(i);
        name == ".debug_loclists" || name == ".debug_loc" || name == ".debug_macro" ||
        name == ".debug_macinfo" || name == ".debug_frame" || name == ".debug_pubnames" ||
        name == ".debug_pubtypes" || name == ".debug_gnu_pubnames" ||
        name == ".debug_gnu_pubtypes" || name == ".debug_names") {
      dropped.push_back(i);
      continue;
    }
    if (s.sh_offset > size || s.sh_size > size - s.sh_offset || s.sh_size < sizeof(Elf64_Chdr))
      return -1;
    Elf64_Chdr ch;
    std::memcpy(&ch, in + s.sh_offset, sizeof ch);
    if (ch.ch_type != ELFCOMPRESS_ZLIB) continue;  // left as it is, for libdw
    // DEFLATE expands at most 1032 times; an alignment is a power of two (0 and 1: none).
    const std::uint64_t stream = s.sh_size - sizeof ch;
    const std::uint64_t align = ch.ch_addralign == 0 ? 1 : ch.ch_addralign;
    if (ch.ch_size > stream * 1032 + 64 || (align & (align - 1)) != 0 || align > 4096) return -1;
    work.push_back(inflation{i, s.sh_offset + sizeof ch, stream, 0, ch.ch_size, align});
  }
  if (work.empty()) return -1;

  // The copy: the original's bytes in place (but for the compressed sections), the inflated
  // sections after them, then the section headers.
  std::uint64_t out_size = size;
  for (inflation& w : work) {
    w.to = align_up(out_size, w.align);
    out_size = w.to + w.size;
  }
  const std::uint64_t shoff = align_up(out_size, 8);
  out_size = shoff + sections.size() * sizeof(Elf64_Shdr);

  const int copy = ::memfd_create("lowalloc-debuginfo", MFD_CLOEXEC);
  if (copy < 0) return -1;
  bool ok = ::ftruncate(copy, static_cast<off_t>(out_size)) == 0;
  if (ok) {
    const mapping target(static_cast<std::size_t>(out_size), PROT_READ | PROT_WRITE, MAP_SHARED,
                         copy);
    unsigned char* out = target.bytes();
    ok = out != nullptr;
    if (ok) {
      // The original's bytes between the compressed sections (sorted by offset; sections that
      // overlap are taken as one hole).
      std::vector<std::pair<std::uint64_t, std::uint64_t>> holes;
      for (const inflation& w : work)
        holes.emplace_back(sections[w.section].sh_offset,
                           sections[w.section].sh_offset + sections[w.section].sh_size);
      for (const std::size_t i : dropped)
        holes.emplace_back(sections[i].sh_offset, sections[i].sh_offset + sections[i].sh_size);
      std::sort(holes.begin(), holes.end());
      std::uint64_t at = 0;
      for (const auto& [lo, hi] : holes) {
        if (lo > at) std::memcpy(out + at, in + at, lo - at);
        at = std::max(at, hi);
      }
      if (size > at) std::memcpy(out + at, in + at, size - at);
      ok = inflate_all(in, out, work);
      if (ok) {
        for (const inflation& w : work) {
          Elf64_Shdr& s = sections[w.section];
          s.sh_flags &= ~static_cast<Elf64_Xword>(SHF_COMPRESSED);
          s.sh_offset = w.to;
          s.sh_size = w.size;
          s.sh_addralign = w.align;
        }
        for (const std::size_t i : dropped) {
          sections[i].sh_flags &= ~static_cast<Elf64_Xword>(SHF_COMPRESSED);
          sections[i].sh_size = 0;
        }
        std::memcpy(out + shoff, sections.data(), sections.size() * sizeof(Elf64_Shdr));
        eh.e_shoff = shoff;
        std::memcpy(out, &eh, sizeof eh);
      }
    }
  }
  if (!ok) {
    ::close(copy);
    return -1;
  }
  return copy;
}

}  // namespace lowalloc::analyze::detail
