// The lowalloc trace file format, version 10: constants shared by the recorder and the reader.
// docs/trace-format.md describes every field.
#ifndef LOWALLOC_SRC_TRACE_FORMAT_HPP
#define LOWALLOC_SRC_TRACE_FORMAT_HPP

#include <cstdint>

namespace lowalloc::trace_format {

inline constexpr char file_magic[8] = {'L', 'O', 'W', 'A', 'L', 'L', 'O', 'C'};
inline constexpr std::uint16_t version = 10;
// Up to version 5 stack ids are a stream's (RESET voids them), from version 6 the process's (no
// RESET); from version 7 an ORDERS record gives the order of each FREE and ADDRESSES entry; from
// version 8 a SHADOWED record names the allocation functions the recorder could not hook; from
// version 9 a FREE_KEPT names its ordinal from one of the block's recent ones (FREE_KEPT_FROM);
// from version 10 a STOPPED record says the recorder stopped writing, and why.
// Version 1 lacks LIVE, STACK_SHARED, FREE_KEPT and KEPT; version 2 lacks CRASH and MODULE_ID;
// versions 1 to 3 carry the dt of ALLOC, FREE, FREE_LOCAL and FREE_KEPT in the record itself;
// version 4 in a TICK record before the event; from version 5 a block's tick section, after its
// records, lists them.
inline constexpr std::uint16_t oldest_version = 1;
inline constexpr std::uint16_t file_header_size = 16;

inline constexpr std::uint32_t block_magic = 0x4B4C424C;  // "LBLK" little-endian
inline constexpr std::uint32_t block_header_size = 16;
// In a block header's stream id (version 4): the payload was compressed with the payload of the
// stream's previous block in the file as a zstd prefix.
inline constexpr std::uint32_t stream_prefixed = 0x80000000u;
inline constexpr std::uint32_t max_block_bytes = 16u << 20;
inline constexpr std::uint32_t max_string_bytes = 64u << 10;
// A GNU build id is 20 bytes (SHA-1) for GCC and clang; the record keeps up to this many.
inline constexpr std::uint32_t max_build_id_bytes = 64;

enum tag : std::uint8_t {
  tag_time = 0x01,
  tag_process = 0x02,
  tag_thread = 0x03,
  tag_module = 0x04,
  tag_unmodule = 0x05,
  tag_stack = 0x06,
  tag_reset = 0x07,
  tag_live = 0x08,
  tag_stack_shared = 0x09,
  tag_alloc = 0x10,  // 0x10..0x17, low 3 bits: alloc_kind
  tag_free = 0x18,
  tag_lost = 0x19,
  tag_end = 0x1A,
  tag_free_local = 0x1B,
  tag_addresses = 0x1C,
  tag_exec = 0x1D,
  tag_free_kept = 0x1E,
  tag_kept = 0x1F,
  tag_crash = 0x20,
  tag_module_id = 0x21,
  tag_tick = 0x22,
  tag_orders = 0x23,
  tag_shadowed = 0x24,
  tag_stopped = 0x25,         // version 10
  tag_free_kept_from = 0x28,  // 0x28..0x2F (version 9), low 3 bits: the anchor
};

// FREE_KEPT_FROM: a block's anchors are the stream ordinals of its latest FREE_KEPT records, most
// recent first (all 0 at the block's start). A record names its ordinal as a difference from one
// of them; then that ordinal becomes the first anchor, and the one it came from is dropped if it
// was near (less than kept_anchor_near away: a walk that goes on), else the last one is.
inline constexpr unsigned kept_anchors = 8;
inline constexpr std::uint64_t kept_anchor_near = 64;

enum alloc_kind : std::uint8_t {
  kind_malloc = 0,
  kind_calloc = 1,
  kind_realloc = 2,
  kind_reallocarray = 3,
  kind_posix_memalign = 4,
  kind_aligned_alloc = 5,
  kind_memalign = 6,
  kind_valloc = 7,  // valloc and pvalloc
};

// The allocation functions a SHADOWED record names: bit i of its mask is shadowed_names[i]. The
// last two stand for their families (the array, sized, aligned and nothrow forms).
inline constexpr const char* shadowed_names[] = {
    "malloc",        "free",     "calloc", "realloc", "reallocarray", "posix_memalign",
    "aligned_alloc", "memalign", "valloc", "pvalloc", "operator new", "operator delete"};
inline constexpr unsigned shadowed_count = sizeof shadowed_names / sizeof shadowed_names[0];

inline constexpr std::uint64_t process_flag_fork_child = 1;
inline constexpr std::uint64_t process_flag_exec = 2;

// CRASH flags.
inline constexpr std::uint64_t crash_flag_thread_written = 1;  // the crashing thread's last events
inline constexpr std::uint64_t crash_flag_writer_late = 2;     // blocks handed over may be missing
inline constexpr std::uint64_t crash_flag_more_threads = 4;    // more threads than listed
// A signal that ends the process (SIGTERM, SIGINT, ...), not a fault: every thread's events were
// written as at an exit, and END follows.
inline constexpr std::uint64_t crash_flag_ended = 8;
// With `ended`: the signal came while the thread was inside the recorder, which finished the
// event before acting on it.
inline constexpr std::uint64_t crash_flag_deferred = 16;

}  // namespace lowalloc::trace_format

#endif
