// Separate debug files with compressed sections, inflated before libdw reads them. Debian's -dbg
// and -dbgsym packages compress their DWARF with zlib (SHF_COMPRESSED), and libdw inflates every
// debug section of a file, with zlib, when it opens the file: libc's debug file alone costs 40 ms
// that way, a large library's seconds. inflate_debug_file does the same work with libdeflate, on
// two threads, into an anonymous in-memory file that libdwfl then opens in place of the original.
// Not part of lowalloc's API.
#ifndef LOWALLOC_SRC_ANALYZE_DEBUG_FILE_HPP
#define LOWALLOC_SRC_ANALYZE_DEBUG_FILE_HPP

namespace lowalloc::analyze::detail {

/// `fd`: an open ELF file. When it is a 64-bit little-endian ELF file with zlib-compressed
/// sections, returns a new descriptor (close-on-exec, at offset 0) of a copy in memory whose
/// sections are the same except that those are stored inflated (no SHF_COMPRESSED, each at a new
/// offset, the section headers after them). -1, with `fd` untouched, when there is nothing to
/// inflate or anything fails: a section that does not inflate to the size its header gives, a
/// header out of the file's bounds, no memory. The copy holds no byte of the compressed
/// sections (the places they had are holes), so it costs the inflated sections and the rest.
/// Compressed sections that symbolization never reads (location lists, macros, call frames,
/// name indexes) are left empty in the copy, not inflated.
int inflate_debug_file(int fd);

}  // namespace lowalloc::analyze::detail

#endif
