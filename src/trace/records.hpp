// The records of a block payload (docs/trace-format.md, "Records"), each defined once: its tag,
// its fields, how the recorder encodes it and how the reader decodes it.
//
// Encoding writes to raw memory and needs nothing of the C++ runtime (the recorder has none);
// the caller reserves room first (each encoder's bound is next to it). Decoding is a template
// over the reader's byte source, which owns error handling:
//
//   struct Reader {
//     std::uint8_t byte();                   // the next byte
//     std::uint64_t varint();                // unsigned LEB128
//     std::int64_t svarint();                // zig-zag, then LEB128
//     std::string_view string();             // varint length, then the bytes
//     std::uint64_t count(std::size_t min);  // a count of items of at least `min` bytes each
//     [[noreturn]] void fail(const char* what);  // a record that cannot be decoded
//   };
//
// Records that hold a list (PROCESS, MODULE, STACK, STACK_SHARED, ADDRESSES, KEPT, LIVE, CRASH)
// hand the visitor their fixed fields and a cursor over the items, decoded as the visitor takes
// them, so that a check on an item fails at that item's position; the items a visitor does not take
// are skipped.
#ifndef LOWALLOC_SRC_TRACE_RECORDS_HPP
#define LOWALLOC_SRC_TRACE_RECORDS_HPP

#include "trace/format.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace lowalloc::trace_format {

// --- primitives ----------------------------------------------------------------------------------

inline constexpr std::size_t max_varint_bytes = 10;

inline unsigned char* put_varint(unsigned char* p, std::uint64_t v) noexcept {
  while (v >= 0x80) {
    *p++ = static_cast<unsigned char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<unsigned char>(v);
  return p;
}

inline unsigned char* put_svarint(unsigned char* p, std::int64_t v) noexcept {
  return put_varint(p, (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
}

// A string of at most `cap` bytes: longer ones are cut.
inline unsigned char* put_string(unsigned char* p, const char* s, std::size_t n,
                                 std::size_t cap) noexcept {
  if (n > cap) n = cap;
  p = put_varint(p, n);
  if (n != 0) std::memcpy(p, s, n);
  return p + n;
}

inline unsigned char* put_string(unsigned char* p, const char* s, std::size_t cap) noexcept {
  return put_string(p, s, s != nullptr ? std::strlen(s) : 0, cap);
}

// --- the records ---------------------------------------------------------------------------------

/// TIME: sets the stream clock (absolute ticks) and pairs it with CLOCK_MONOTONIC.
struct time_record {
  static constexpr std::uint8_t tag = tag_time;
  std::uint64_t ticks = 0;
  std::uint64_t ns = 0;
};

/// PROCESS: the traced process; then `argc` strings of argv.
struct process_record {
  static constexpr std::uint8_t tag = tag_process;
  std::uint64_t pid = 0;
  std::uint64_t ppid = 0;
  std::uint64_t flags = 0;  // process_flag_*
  std::string_view exe;
  std::uint64_t argc = 0;
};

/// THREAD: the OS thread id of the stream.
struct thread_record {
  static constexpr std::uint8_t tag = tag_thread;
  std::uint64_t tid = 0;
};

/// MODULE: a loaded ELF object; then `segments` (start, size) ranges of its PT_LOAD segments.
struct module_record {
  static constexpr std::uint8_t tag = tag_module;
  std::uint64_t dt = 0;
  std::uint64_t id = 0;
  std::uint64_t bias = 0;
  std::string_view path;
  std::uint64_t segments = 0;
};

struct segment {
  std::uint64_t start = 0;
  std::uint64_t size = 0;
};

/// MODULE_ID: what the file of module `id` was when it was loaded, to tell whether the file
/// on disk is still the same: its GNU build id (empty if it has none), and its size and
/// modification time (0 and 0 if the recorder could not stat it).
struct module_id_record {
  static constexpr std::uint8_t tag = tag_module_id;
  std::uint64_t id = 0;
  std::string_view build_id;
  std::uint64_t size = 0;
  std::uint64_t mtime_ns = 0;  // nanoseconds since the epoch
};

/// UNMODULE: the module `id` was unloaded.
struct unmodule_record {
  static constexpr std::uint8_t tag = tag_unmodule;
  std::uint64_t dt = 0;
  std::uint64_t id = 0;
};

/// STACK: defines stack `id` of the stream; then `frames` return addresses, innermost first.
struct stack_record {
  static constexpr std::uint8_t tag = tag_stack;
  std::uint64_t id = 0;
  std::uint64_t frames = 0;
};

/// STACK_SHARED: defines stack `id` of the stream as `added` return addresses, innermost first,
/// then the `shared` outermost ones of the stream's previous STACK or STACK_SHARED.
struct stack_shared_record {
  static constexpr std::uint8_t tag = tag_stack_shared;
  std::uint64_t id = 0;
  std::uint64_t shared = 0;
  std::uint64_t added = 0;
};

/// RESET: the stream's stack ids are void from here.
struct reset_record {
  static constexpr std::uint8_t tag = tag_reset;
  std::uint64_t dt = 0;
};

/// ALLOC (tags 0x10..0x17, the low bits the allocation function): `size` bytes, stack `stack`.
struct alloc_record {
  static constexpr std::uint8_t tag = tag_alloc;
  alloc_kind kind = kind_malloc;
  std::uint64_t dt = 0;
  std::uint64_t size = 0;
  std::uint64_t stack = 0;
};

/// FREE: `addr` was freed. Written as a delta from the block's previous FREE address.
struct free_record {
  static constexpr std::uint8_t tag = tag_free;
  std::uint64_t dt = 0;
  std::uint64_t addr = 0;
};

/// LOST: events the recorder could not record.
struct lost_record {
  static constexpr std::uint8_t tag = tag_lost;
  std::uint64_t count = 0;
};

/// END: the process ended normally.
struct end_record {
  static constexpr std::uint8_t tag = tag_end;
  std::uint64_t dt = 0;
};

/// FREE_LOCAL: frees the block's allocation `distance` ALLOC records back (0: the latest).
struct free_local_record {
  static constexpr std::uint8_t tag = tag_free_local;
  std::uint64_t dt = 0;
  std::uint64_t distance = 0;
};

/// ADDRESSES: the last record of a block; then `count` (ordinal, address) entries, ordinals
/// increasing, each field a delta from the previous entry.
struct addresses_record {
  static constexpr std::uint8_t tag = tag_addresses;
  std::uint64_t count = 0;
};

struct address_entry {
  std::uint64_t ordinal = 0;
  std::uint64_t addr = 0;
};

/// EXEC: the image called exec.
struct exec_record {
  static constexpr std::uint8_t tag = tag_exec;
  std::uint64_t dt = 0;
  std::string_view path;
};

/// SHADOWED (version 8): the allocation functions of bit mask `functions` (bit i:
/// shadowed_names[i]) resolve to definitions in the object `path`, which the dynamic loader
/// searches before the recorder (the executable, linked with an allocator of its own): the
/// program's calls to them do not reach the recorder and are not in the trace.
struct shadowed_record {
  static constexpr std::uint8_t tag = tag_shadowed;
  std::uint64_t functions = 0;
  std::string_view path;
};

/// STOPPED (version 10): the recorder could not write the trace any more (`reason`: the system's
/// words, "No space left on device") and stopped; the program ran on untraced. The last record
/// of the file: the block being written when the write failed was cut off, and no event after
/// this one is in the trace.
struct stopped_record {
  static constexpr std::uint8_t tag = tag_stopped;
  std::uint64_t dt = 0;
  std::string_view reason;
};

/// FREE_KEPT: frees the allocation with stream ordinal `ordinal` (the count of the stream's ALLOC
/// records before it), kept by a block that listed it in no ADDRESSES (KEPT). Written as a
/// delta from the block's previous FREE_KEPT ordinal (tag_free_kept), or from version 9 from one
/// of the block's anchors (tag_free_kept_from, format.hpp).
struct free_kept_record {
  static constexpr std::uint8_t tag = tag_free_kept;
  std::uint64_t dt = 0;
  std::uint64_t ordinal = 0;
};

/// KEPT: the last record of a block whose unfreed allocations not listed in ADDRESSES stay live,
/// known by their stream ordinal; then `count` (ordinal, dropped) entries: the block's allocation
/// `ordinal` received the address of the kept allocation `dropped` (a stream ordinal), whose free
/// was not recorded.
struct kept_record {
  static constexpr std::uint8_t tag = tag_kept;
  std::uint64_t count = 0;
};

struct kept_drop {
  std::uint64_t ordinal = 0;
  std::uint64_t dropped = 0;
};

/// ORDERS (version 7): the last record of a block that has FREE records or an ADDRESSES record.
/// The order (docs/trace-format.md, "Timestamps") of each of the block's `frees` FREE records, in
/// record order, then of each of the `listed` ADDRESSES entries, in theirs: two columns, each
/// value a delta from the one before it in its column (starting at 0).
struct orders_record {
  static constexpr std::uint8_t tag = tag_orders;
  std::uint64_t frees = 0;
  std::uint64_t listed = 0;
};

/// LIVE: kept allocations are known by address from here on; then `count` (ordinal, address)
/// entries, each field a delta from the previous entry.
struct live_record {
  static constexpr std::uint8_t tag = tag_live;
  std::uint64_t dt = 0;
  std::uint64_t count = 0;
};

struct live_entry {
  std::uint64_t ordinal = 0;
  std::uint64_t addr = 0;
};

/// CRASH: the process is being killed by signal `signal`, raised in thread `tid`, and the
/// recorder's crash handler wrote what it could (`flags`: crash_flag_*); then `threads` (tid,
/// allocations, bytes) entries: the threads whose current block was not written, with its ALLOC
/// records and its bytes of events. With crash_flag_ended, a signal sent to end the process:
/// every thread's events were written, there are no entries, and END follows.
struct crash_record {
  static constexpr std::uint8_t tag = tag_crash;
  std::uint64_t dt = 0;
  std::uint64_t signal = 0;
  std::uint64_t tid = 0;
  std::uint64_t flags = 0;
  std::uint64_t threads = 0;
};

struct crash_thread {
  std::uint64_t tid = 0;
  std::uint64_t allocations = 0;
  std::uint64_t bytes = 0;
};

// --- encoding ------------------------------------------------------------------------------------
// Each `encode` returns the end of what it wrote. Bounds: a record of fixed fields takes at most
// 1 + max_varint_bytes per field; strings and lists add their own bytes.

/// What encoding carries from one record to the next within a block: FREE addresses and
/// FREE_KEPT ordinals are deltas.
struct block_encoding {
  std::uint64_t free_addr = 0;
  std::uint64_t free_ordinal = 0;
  std::uint64_t stack = 0;  // the block's previous ALLOC's stack id (version 6)
  std::uint64_t kept_anchor[kept_anchors] = {};  // FREE_KEPT_FROM's (version 9)
};

/// The anchor a FREE_KEPT_FROM of `ordinal` names: the first that is near it, else anchor 0. A
/// walk's next free finds its anchor first, mostly anchor 0, without looking at the others (the
/// nearest of all 8 cost python3 freeing a dict of 100,000 strings 24 M instructions more, the same
/// trace to the byte on ninja and perl). A jump to a block no walk is near takes what it took from
/// the previous FREE_KEPT, with the same tag: naming the nearest of far anchors made the 1 M frees
/// of a perl hash's kept blocks, in the hash's order, take 1,071 kB of events instead of 1,015 kB.
inline unsigned near_anchor(const std::uint64_t* anchors, std::uint64_t ordinal) noexcept {
  for (unsigned k = 0; k < kept_anchors; ++k) {
    const std::uint64_t d = ordinal >= anchors[k] ? ordinal - anchors[k] : anchors[k] - ordinal;
    if (d < kept_anchor_near) return k;
  }
  return 0;
}

/// After a FREE_KEPT_FROM of `ordinal` from anchor `k`: `ordinal` first, the others after it in
/// their order, without anchor k if `ordinal` was near it, else without the last.
inline void move_anchors(std::uint64_t* anchors, unsigned k, std::uint64_t ordinal) noexcept {
  const std::uint64_t d = ordinal >= anchors[k] ? ordinal - anchors[k] : anchors[k] - ordinal;
  for (unsigned i = d < kept_anchor_near ? k : kept_anchors - 1; i > 0; --i)
    anchors[i] = anchors[i - 1];
  anchors[0] = ordinal;
}

inline unsigned char* encode(unsigned char* p, const time_record& r) noexcept {
  *p++ = time_record::tag;
  p = put_varint(p, r.ticks);
  return put_varint(p, r.ns);
}

/// The fixed fields; then `r.argc` put_string calls for argv.
inline unsigned char* encode(unsigned char* p, const process_record& r,
                             std::size_t exe_cap) noexcept {
  *p++ = process_record::tag;
  p = put_varint(p, r.pid);
  p = put_varint(p, r.ppid);
  p = put_varint(p, r.flags);
  p = put_string(p, r.exe.data(), r.exe.size(), exe_cap);
  return put_varint(p, r.argc);
}

inline unsigned char* encode(unsigned char* p, const thread_record& r) noexcept {
  *p++ = thread_record::tag;
  return put_varint(p, r.tid);
}

/// The fixed fields; then `r.segments` encode(p, segment) calls.
inline unsigned char* encode(unsigned char* p, const module_record& r,
                             std::size_t path_cap) noexcept {
  *p++ = module_record::tag;
  p = put_varint(p, r.dt);
  p = put_varint(p, r.id);
  p = put_varint(p, r.bias);
  p = put_string(p, r.path.data(), r.path.size(), path_cap);
  return put_varint(p, r.segments);
}

inline unsigned char* encode(unsigned char* p, const segment& s) noexcept {
  p = put_varint(p, s.start);
  return put_varint(p, s.size);
}

/// At most 1 + 3 * max_varint_bytes + 1 + max_build_id_bytes bytes.
inline unsigned char* encode(unsigned char* p, const module_id_record& r) noexcept {
  *p++ = module_id_record::tag;
  p = put_varint(p, r.id);
  p = put_string(p, r.build_id.data(), r.build_id.size(), max_build_id_bytes);
  p = put_varint(p, r.size);
  return put_varint(p, r.mtime_ns);
}

inline unsigned char* encode(unsigned char* p, const unmodule_record& r) noexcept {
  *p++ = unmodule_record::tag;
  p = put_varint(p, r.dt);
  return put_varint(p, r.id);
}

/// Return addresses ips[0, n): the first absolute, the others deltas from the one before.
template <class Address>
unsigned char* put_return_addresses(unsigned char* p, const Address* ips, std::size_t n) noexcept {
  if (n == 0) return p;
  p = put_varint(p, ips[0]);
  for (std::size_t k = 1; k < n; ++k)
    p = put_svarint(p, static_cast<std::int64_t>(static_cast<std::uint64_t>(ips[k]) -
                                                 static_cast<std::uint64_t>(ips[k - 1])));
  return p;
}

/// The whole record: at most 1 + 2 * max_varint_bytes + n * max_varint_bytes bytes.
template <class Address>
unsigned char* encode_stack(unsigned char* p, std::uint64_t id, const Address* ips,
                            std::size_t n) noexcept {
  *p++ = stack_record::tag;
  p = put_varint(p, id);
  p = put_varint(p, n);
  return put_return_addresses(p, ips, n);
}

/// The whole record for the stack ips[0, n) whose outermost `shared` frames are those of the
/// stream's previous stack: at most 1 + 3 * max_varint_bytes + (n - shared) * max_varint_bytes.
template <class Address>
unsigned char* encode_stack_shared(unsigned char* p, std::uint64_t id, const Address* ips,
                                   std::size_t n, std::size_t shared) noexcept {
  *p++ = stack_shared_record::tag;
  p = put_varint(p, id);
  p = put_varint(p, shared);
  p = put_varint(p, n - shared);
  return put_return_addresses(p, ips, n - shared);
}

inline unsigned char* encode(unsigned char* p, const reset_record& r) noexcept {
  *p++ = reset_record::tag;
  return put_varint(p, r.dt);
}

// The dt of an event record (ALLOC, FREE, FREE_LOCAL, FREE_KEPT) is not in the record: from
// version 5 the block's tick section lists it (encode_ticks), version 4 had a TICK record before
// the event. These encoders write the record alone; its `dt` is not read.

/// The tick section that ends a version 5 block: the count of events with a dt that is not 0;
/// the gap of each (the first: its index among the block's events; each next: events from the one
/// before it); the dt of each; then the section's size in bytes, 4 bytes little-endian. Gaps and
/// dts each in a column: the dts are almost all 1 tick. At most
/// tick_section_bytes(count) bytes.
inline constexpr std::size_t tick_section_bytes(std::size_t count) noexcept {
  return max_varint_bytes + count * (5 + max_varint_bytes) + 4;
}

inline unsigned char* encode_ticks(unsigned char* p, const std::uint32_t* gaps,
                                   const std::uint64_t* dts, std::size_t count) noexcept {
  unsigned char* const start = p;
  p = put_varint(p, count);
  for (std::size_t i = 0; i < count; ++i) p = put_varint(p, gaps[i]);
  for (std::size_t i = 0; i < count; ++i) p = put_varint(p, dts[i]);
  const auto size = static_cast<std::uint32_t>(p - start);
  for (unsigned i = 0; i < 4; ++i) *p++ = static_cast<unsigned char>(size >> (8 * i));
  return p;
}

/// Up to version 5: the stack id itself.
inline unsigned char* encode(unsigned char* p, const alloc_record& r) noexcept {
  *p++ = static_cast<unsigned char>(unsigned{alloc_record::tag} | unsigned{r.kind});
  p = put_varint(p, r.size);
  return put_varint(p, r.stack);
}

/// From version 6: the stack id as the difference from the block's previous ALLOC's. Ids are
/// the process's, and a thread names long runs of ids that others gave (0 to 2^32, mostly a few
/// apart): as they are, a program of four threads making the same 2^16 x 4 stacks wrote 2.5 MB of
/// trace, as differences 0.33 MB.
inline unsigned char* encode(unsigned char* p, const alloc_record& r, block_encoding& b) noexcept {
  *p++ = static_cast<unsigned char>(unsigned{alloc_record::tag} | unsigned{r.kind});
  p = put_varint(p, r.size);
  p = put_svarint(p, static_cast<std::int64_t>(r.stack - b.stack));
  b.stack = r.stack;
  return p;
}

inline unsigned char* encode(unsigned char* p, const free_record& r, block_encoding& b) noexcept {
  *p++ = free_record::tag;
  p = put_svarint(p, static_cast<std::int64_t>(r.addr - b.free_addr));
  b.free_addr = r.addr;
  return p;
}

inline unsigned char* encode(unsigned char* p, const lost_record& r) noexcept {
  *p++ = lost_record::tag;
  return put_varint(p, r.count);
}

inline unsigned char* encode(unsigned char* p, const end_record& r) noexcept {
  *p++ = end_record::tag;
  return put_varint(p, r.dt);
}

inline unsigned char* encode(unsigned char* p, const free_local_record& r) noexcept {
  *p++ = free_local_record::tag;
  return put_varint(p, r.distance);
}

/// The count; then the entries through an address_list_encoder.
inline unsigned char* encode(unsigned char* p, const addresses_record& r) noexcept {
  *p++ = addresses_record::tag;
  return put_varint(p, r.count);
}

/// The entries of ADDRESSES, in increasing ordinal: at most 2 * max_varint_bytes each.
class address_list_encoder {
 public:
  unsigned char* encode(unsigned char* p, const address_entry& e) noexcept {
    p = put_varint(p, e.ordinal - prev_.ordinal);
    p = put_svarint(p, static_cast<std::int64_t>(e.addr - prev_.addr));
    prev_ = e;
    return p;
  }

 private:
  address_entry prev_;
};

inline unsigned char* encode(unsigned char* p, const free_kept_record& r,
                             block_encoding& b) noexcept {
  *p++ = free_kept_record::tag;
  p = put_svarint(p, static_cast<std::int64_t>(r.ordinal - b.free_ordinal));
  b.free_ordinal = r.ordinal;
  return p;
}

/// Version 9: from the block's anchor near the ordinal (near_anchor). A program that frees its
/// kept blocks in an order of its own walks a few runs of them at once (`ninja -n`: FREE_KEPT
/// deltas from the previous one were 118 kB of its 159 kB of compressed events, 15 bits each; from
/// anchors its trace took 121 kB instead of 168 kB).
inline unsigned char* encode_from_anchor(unsigned char* p, const free_kept_record& r,
                                         block_encoding& b) noexcept {
  const unsigned k = near_anchor(b.kept_anchor, r.ordinal);
  *p++ = static_cast<unsigned char>(unsigned{tag_free_kept_from} | k);
  p = put_svarint(p, static_cast<std::int64_t>(r.ordinal - b.kept_anchor[k]));
  move_anchors(b.kept_anchor, k, r.ordinal);
  return p;
}

/// The count; then the entries through a kept_list_encoder.
inline unsigned char* encode(unsigned char* p, const kept_record& r) noexcept {
  *p++ = kept_record::tag;
  return put_varint(p, r.count);
}

/// The entries of KEPT, in increasing ordinal: at most 2 * max_varint_bytes each.
class kept_list_encoder {
 public:
  unsigned char* encode(unsigned char* p, const kept_drop& e) noexcept {
    p = put_varint(p, e.ordinal - prev_);
    prev_ = e.ordinal;
    return put_varint(p, e.dropped);
  }

 private:
  std::uint64_t prev_ = 0;
};

/// The counts; then the FREEs' column, then the entries', each through an order_list_encoder.
inline unsigned char* encode(unsigned char* p, const orders_record& r) noexcept {
  *p++ = orders_record::tag;
  p = put_varint(p, r.frees);
  return put_varint(p, r.listed);
}

/// One column of ORDERS: at most max_varint_bytes an order.
class order_list_encoder {
 public:
  unsigned char* encode(unsigned char* p, std::uint64_t order) noexcept {
    p = put_svarint(p, static_cast<std::int64_t>(order - prev_));
    prev_ = order;
    return p;
  }

 private:
  std::uint64_t prev_ = 0;
};

/// The fixed fields; then the entries through a live_list_encoder.
inline unsigned char* encode(unsigned char* p, const live_record& r) noexcept {
  *p++ = live_record::tag;
  p = put_varint(p, r.dt);
  return put_varint(p, r.count);
}

/// The entries of LIVE, in any order: at most 2 * max_varint_bytes each.
class live_list_encoder {
 public:
  unsigned char* encode(unsigned char* p, const live_entry& e) noexcept {
    p = put_svarint(p, static_cast<std::int64_t>(e.ordinal - prev_.ordinal));
    p = put_svarint(p, static_cast<std::int64_t>(e.addr - prev_.addr));
    prev_ = e;
    return p;
  }

 private:
  live_entry prev_;
};

inline unsigned char* encode(unsigned char* p, const exec_record& r,
                             std::size_t path_cap) noexcept {
  *p++ = exec_record::tag;
  p = put_varint(p, r.dt);
  return put_string(p, r.path.data(), r.path.size(), path_cap);
}

inline unsigned char* encode(unsigned char* p, const shadowed_record& r,
                             std::size_t path_cap) noexcept {
  *p++ = shadowed_record::tag;
  p = put_varint(p, r.functions);
  return put_string(p, r.path.data(), r.path.size(), path_cap);
}

inline unsigned char* encode(unsigned char* p, const stopped_record& r,
                             std::size_t reason_cap) noexcept {
  *p++ = stopped_record::tag;
  p = put_varint(p, r.dt);
  return put_string(p, r.reason.data(), r.reason.size(), reason_cap);
}

/// The fixed fields; then `r.threads` encode(p, crash_thread) calls.
inline unsigned char* encode(unsigned char* p, const crash_record& r) noexcept {
  *p++ = crash_record::tag;
  p = put_varint(p, r.dt);
  p = put_varint(p, r.signal);
  p = put_varint(p, r.tid);
  p = put_varint(p, r.flags);
  return put_varint(p, r.threads);
}

/// An entry of CRASH: at most 3 * max_varint_bytes.
inline unsigned char* encode(unsigned char* p, const crash_thread& e) noexcept {
  p = put_varint(p, e.tid);
  p = put_varint(p, e.allocations);
  return put_varint(p, e.bytes);
}

// --- decoding ------------------------------------------------------------------------------------

/// A varint known to be whole (the tick section is checked once, by open_ticks).
inline std::uint64_t read_checked_varint(const std::uint8_t*& p) noexcept {
  std::uint64_t v = 0;
  for (unsigned shift = 0;; shift += 7) {
    const std::uint8_t b = *p++;
    v |= std::uint64_t{b & 0x7Fu} << shift;
    if ((b & 0x80u) == 0) return v;
  }
}

/// What decoding carries from one record to the next within a block: deltas, and the dt of the
/// next event (a TICK record before it in version 4, the block's tick section from version 5). A
/// new one for each block; of a version 5 block, through open_ticks.
struct block_decoding {
  /// For a file of format `file_version` (before 4, events carry their dt).
  explicit block_decoding(std::uint16_t file_version = version) noexcept
      : dt_inline(file_version < 4),
        ticks_at_end(file_version >= 5),
        stack_deltas(file_version >= 6),
        orders(file_version >= 7),
        anchors(file_version >= 9) {}

  // One countdown for both versions with ticks, inlined into the decoder (a branch more per
  // event, or the call GCC made of this, was 4 to 10% of a report's time); the tick itself is
  // taken out of line, once in many events.
  template <class Reader>
  [[gnu::always_inline]] std::uint64_t event_dt(Reader& r) {
    if (dt_inline) return r.varint();
    if (until_tick != 0) {
      --until_tick;
      return 0;
    }
    return take_tick();
  }

  /// A TICK record (version 4): its dt goes to the next event.
  void add_tick(std::uint64_t dt) noexcept {
    tick = tick + dt < dt ? ~std::uint64_t{0} : tick + dt;
    until_tick = 0;
  }

  /// Whether every tick of the section was an event's (else it named events the block lacks).
  bool ticks_done() const noexcept { return ticks_left == 0; }

  static constexpr std::uint64_t no_tick = ~std::uint64_t{0};

  std::uint64_t free_addr = 0;
  std::uint64_t free_ordinal = 0;
  std::uint64_t stack = 0;                       // the previous ALLOC's stack id (version 6)
  std::uint64_t kept_anchor[kept_anchors] = {};  // FREE_KEPT_FROM's (version 9)
  // Events before the next with a dt (no_tick: none; an event takes 1 off it).
  std::uint64_t until_tick = no_tick;
  std::uint64_t tick = 0;  // TICK's dt, for the next event (version 4)
  bool dt_inline;
  bool ticks_at_end;
  bool stack_deltas;  // an ALLOC's stack id is the difference from the previous (version 6)
  bool orders;        // ORDERS records (version 7)
  bool anchors;       // FREE_KEPT_FROM records (version 9)
  // Version 5: the section's columns where the next tick's dt and the gap after it are, and the
  // ticks not yet given to an event (checked by open_ticks).
  const std::uint8_t* tick_dts = nullptr;
  const std::uint8_t* tick_gaps = nullptr;
  std::uint64_t ticks_left = 0;

 private:
  [[gnu::noinline]] std::uint64_t take_tick() noexcept {
    if (!ticks_at_end) {  // version 4: the TICK records' sum
      const std::uint64_t dt = tick;
      tick = 0;
      until_tick = no_tick;
      return dt;
    }
    const std::uint64_t dt = read_checked_varint(tick_dts);
    until_tick = --ticks_left != 0 ? read_checked_varint(tick_gaps) - 1 : no_tick;
    return dt;
  }
};

/// The tick section at the end of a version 5 block of `size` bytes (encode_ticks), into `b`;
/// `*records` is then the size of the records before it. nullptr, or what is wrong with it. The
/// section is checked whole here, so that events read it without a bound.
inline const char* open_ticks(const std::uint8_t* payload, std::size_t size, std::size_t* records,
                              block_decoding& b) noexcept {
  if (size < 5) return "the block has no tick section";
  std::uint32_t bytes = 0;
  for (unsigned i = 0; i < 4; ++i) bytes |= std::uint32_t{payload[size - 4 + i]} << (8 * i);
  if (bytes == 0 || bytes > size - 4) return "the tick section's size is past the block's start";
  const std::uint8_t* p = payload + (size - 4 - bytes);
  const std::uint8_t* const end = payload + (size - 4);
  // The next varint, if it lies wholly inside the section and fits 64 bits.
  const auto next = [end](const std::uint8_t*& q, std::uint64_t& v) {
    v = 0;
    for (unsigned shift = 0; q != end && shift < 64; shift += 7) {
      const std::uint8_t c = *q++;
      v |= std::uint64_t{c & 0x7Fu} << shift;
      if ((c & 0x80u) == 0) return shift < 63 || c <= 1;
    }
    return false;
  };
  std::uint64_t count = 0;
  if (!next(p, count)) return "the tick section's count is cut or too long";
  if (count > static_cast<std::uint64_t>(end - p) / 2)
    return "the tick section's count is too large";
  const std::uint8_t* gaps = p;
  std::uint64_t v = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (!next(p, v)) return "a gap of the tick section is cut or too long";
    if (i != 0 && v == 0) return "the tick section gives one event two ticks";
    if (v > 0xFFFFFFFFu) return "a gap of the tick section is too large";
  }
  const std::uint8_t* dts = p;
  for (std::uint64_t i = 0; i < count; ++i)
    if (!next(p, v)) return "a dt of the tick section is cut or too long";
  if (p != end) return "the tick section has bytes after its last dt";
  *records = size - 4 - bytes;
  b.ticks_left = count;
  b.tick_dts = dts;
  b.tick_gaps = gaps;
  b.until_tick = count != 0 ? read_checked_varint(b.tick_gaps) : block_decoding::no_tick;
  return nullptr;
}

/// The items of a list record, decoded one `next()` at a time.
template <class Reader>
class cursor_base {
 public:
  cursor_base(Reader& r, std::uint64_t n) : r_(r), left_(n) {}
  std::uint64_t left() const noexcept { return left_; }

 protected:
  Reader& r_;
  std::uint64_t left_;
};

template <class Reader, class Item>
class item_cursor;

/// PROCESS: argv.
template <class Reader>
class item_cursor<Reader, std::string_view> : public cursor_base<Reader> {
 public:
  using cursor_base<Reader>::cursor_base;
  std::string_view next() {
    --this->left_;
    return this->r_.string();
  }
};

/// MODULE: the PT_LOAD segments.
template <class Reader>
class item_cursor<Reader, segment> : public cursor_base<Reader> {
 public:
  using cursor_base<Reader>::cursor_base;
  segment next() {
    --this->left_;
    segment s;
    s.start = this->r_.varint();
    s.size = this->r_.varint();
    return s;
  }
};

/// STACK: return addresses, the first absolute, the others deltas from the one before.
template <class Reader>
class item_cursor<Reader, std::uint64_t> : public cursor_base<Reader> {
 public:
  using cursor_base<Reader>::cursor_base;
  std::uint64_t next() {
    ip_ = first_ ? this->r_.varint() : ip_ + static_cast<std::uint64_t>(this->r_.svarint());
    first_ = false;
    --this->left_;
    return ip_;
  }

 private:
  std::uint64_t ip_ = 0;
  bool first_ = true;
};

/// ADDRESSES: entries with both deltas resolved; ordinals must increase.
template <class Reader>
class item_cursor<Reader, address_entry> : public cursor_base<Reader> {
 public:
  using cursor_base<Reader>::cursor_base;
  address_entry next() {
    const std::uint64_t delta = this->r_.varint();
    if (!first_ && delta == 0) this->r_.fail("ADDRESSES ordinals not increasing");
    // A sum past 2^64 (only a damaged record has one) names no allocation: saturate.
    e_.ordinal = e_.ordinal + delta < delta ? ~std::uint64_t{0} : e_.ordinal + delta;
    e_.addr += static_cast<std::uint64_t>(this->r_.svarint());
    first_ = false;
    --this->left_;
    return e_;
  }

 private:
  address_entry e_;
  bool first_ = true;
};

/// KEPT: entries with the ordinal delta resolved; ordinals must increase.
template <class Reader>
class item_cursor<Reader, kept_drop> : public cursor_base<Reader> {
 public:
  using cursor_base<Reader>::cursor_base;
  kept_drop next() {
    const std::uint64_t delta = this->r_.varint();
    if (!first_ && delta == 0) this->r_.fail("KEPT ordinals not increasing");
    e_.ordinal = e_.ordinal + delta < delta ? ~std::uint64_t{0} : e_.ordinal + delta;
    e_.dropped = this->r_.varint();
    first_ = false;
    --this->left_;
    return e_;
  }

 private:
  kept_drop e_;
  bool first_ = true;
};

/// ORDERS: the orders of the FREEs, then of the ADDRESSES entries, the deltas resolved (each
/// column from 0).
struct order_entry {
  std::uint64_t order = 0;
};

template <class Reader>
class item_cursor<Reader, order_entry> : public cursor_base<Reader> {
 public:
  item_cursor(Reader& r, std::uint64_t n, std::uint64_t first_column)
      : cursor_base<Reader>(r, n), first_left_(first_column) {}
  order_entry next() {
    if (first_left_-- == 0) e_.order = 0;  // the second column starts
    e_.order += static_cast<std::uint64_t>(this->r_.svarint());
    --this->left_;
    return e_;
  }

 private:
  order_entry e_;
  std::uint64_t first_left_;
};

/// LIVE: entries with both deltas resolved.
template <class Reader>
class item_cursor<Reader, live_entry> : public cursor_base<Reader> {
 public:
  using cursor_base<Reader>::cursor_base;
  live_entry next() {
    e_.ordinal += static_cast<std::uint64_t>(this->r_.svarint());
    e_.addr += static_cast<std::uint64_t>(this->r_.svarint());
    --this->left_;
    return e_;
  }

 private:
  live_entry e_;
};

/// CRASH: the threads whose current block was not written.
template <class Reader>
class item_cursor<Reader, crash_thread> : public cursor_base<Reader> {
 public:
  using cursor_base<Reader>::cursor_base;
  crash_thread next() {
    --this->left_;
    crash_thread e;
    e.tid = this->r_.varint();
    e.allocations = this->r_.varint();
    e.bytes = this->r_.varint();
    return e;
  }
};

namespace detail {

template <class Cursor>
void skip_rest(Cursor& c) {
  while (c.left() != 0) c.next();
}

}  // namespace detail

/// Decodes the record at the reader's position and hands it to `visit`: visit(record) for the
/// records of fixed fields, visit(record, cursor) for those with a list. Returns the tag. TICK is
/// not visited: its dt is the next event's.
template <class Reader, class Visitor>
std::uint8_t decode_record(Reader& r, block_decoding& b, Visitor&& visit) {
  const std::uint8_t tag = r.byte();
  switch (tag) {
    case tag_time: {
      time_record rec;
      rec.ticks = r.varint();
      rec.ns = r.varint();
      visit(rec);
      break;
    }
    case tag_process: {
      process_record rec;
      rec.pid = r.varint();
      rec.ppid = r.varint();
      rec.flags = r.varint();
      rec.exe = r.string();
      rec.argc = r.count(1);
      item_cursor<Reader, std::string_view> argv(r, rec.argc);
      visit(rec, argv);
      detail::skip_rest(argv);
      break;
    }
    case tag_thread: {
      thread_record rec;
      rec.tid = r.varint();
      visit(rec);
      break;
    }
    case tag_module: {
      module_record rec;
      rec.dt = r.varint();
      rec.id = r.varint();
      rec.bias = r.varint();
      rec.path = r.string();
      rec.segments = r.count(2);
      item_cursor<Reader, segment> segments(r, rec.segments);
      visit(rec, segments);
      detail::skip_rest(segments);
      break;
    }
    case tag_module_id: {
      module_id_record rec;
      rec.id = r.varint();
      rec.build_id = r.string();
      rec.size = r.varint();
      rec.mtime_ns = r.varint();
      visit(rec);
      break;
    }
    case tag_unmodule: {
      unmodule_record rec;
      rec.dt = r.varint();
      rec.id = r.varint();
      visit(rec);
      break;
    }
    case tag_stack: {
      stack_record rec;
      rec.id = r.varint();
      if (rec.id == 0) r.fail("a STACK record defines stack id 0");  // 0 means "no stack"
      rec.frames = r.count(1);
      item_cursor<Reader, std::uint64_t> ips(r, rec.frames);
      visit(rec, ips);
      detail::skip_rest(ips);
      break;
    }
    case tag_stack_shared: {
      stack_shared_record rec;
      rec.id = r.varint();
      if (rec.id == 0) r.fail("a STACK_SHARED record defines stack id 0");
      rec.shared = r.varint();
      rec.added = r.count(1);
      if (rec.shared == 0 && rec.added == 0) r.fail("a STACK_SHARED record of no frame");
      item_cursor<Reader, std::uint64_t> ips(r, rec.added);
      visit(rec, ips);
      detail::skip_rest(ips);
      break;
    }
    case tag_reset: {
      reset_record rec;
      rec.dt = r.varint();
      visit(rec);
      break;
    }
    case tag_tick: {
      if (b.dt_inline) r.fail("a TICK record in a trace of format version 3 or older");
      if (b.ticks_at_end) r.fail("a TICK record in a trace of format version 5 or newer");
      b.add_tick(r.varint());
      break;
    }
    case tag_free: {
      free_record rec;
      rec.dt = b.event_dt(r);
      b.free_addr += static_cast<std::uint64_t>(r.svarint());
      rec.addr = b.free_addr;
      visit(rec);
      break;
    }
    case tag_lost: {
      lost_record rec;
      rec.count = r.varint();
      visit(rec);
      break;
    }
    case tag_end: {
      end_record rec;
      rec.dt = r.varint();
      visit(rec);
      break;
    }
    case tag_free_local: {
      free_local_record rec;
      rec.dt = b.event_dt(r);
      rec.distance = r.varint();
      visit(rec);
      break;
    }
    case tag_addresses: {
      addresses_record rec;
      rec.count = r.count(2);
      item_cursor<Reader, address_entry> entries(r, rec.count);
      visit(rec, entries);
      detail::skip_rest(entries);
      break;
    }
    case tag_free_kept: {
      free_kept_record rec;
      rec.dt = b.event_dt(r);
      b.free_ordinal += static_cast<std::uint64_t>(r.svarint());
      rec.ordinal = b.free_ordinal;
      visit(rec);
      break;
    }
    case tag_kept: {
      kept_record rec;
      rec.count = r.count(2);
      item_cursor<Reader, kept_drop> entries(r, rec.count);
      visit(rec, entries);
      detail::skip_rest(entries);
      break;
    }
    case tag_orders: {
      if (!b.orders) r.fail("an ORDERS record in a trace of format version 6 or older");
      orders_record rec;
      rec.frees = r.count(1);
      rec.listed = r.count(1);
      item_cursor<Reader, order_entry> entries(r, rec.frees + rec.listed, rec.frees);
      visit(rec, entries);
      detail::skip_rest(entries);
      break;
    }
    case tag_live: {
      live_record rec;
      rec.dt = r.varint();
      rec.count = r.count(2);
      item_cursor<Reader, live_entry> entries(r, rec.count);
      visit(rec, entries);
      detail::skip_rest(entries);
      break;
    }
    case tag_exec: {
      exec_record rec;
      rec.dt = r.varint();
      rec.path = r.string();
      visit(rec);
      break;
    }
    case tag_shadowed: {
      shadowed_record rec;
      rec.functions = r.varint();
      if (rec.functions == 0 || rec.functions >> shadowed_count != 0)
        r.fail("a SHADOWED record names no function, or one past the last known");
      rec.path = r.string();
      visit(rec);
      break;
    }
    case tag_stopped: {
      stopped_record rec;
      rec.dt = r.varint();
      rec.reason = r.string();
      visit(rec);
      break;
    }
    case tag_crash: {
      crash_record rec;
      rec.dt = r.varint();
      rec.signal = r.varint();
      rec.tid = r.varint();
      rec.flags = r.varint();
      rec.threads = r.count(3);
      item_cursor<Reader, crash_thread> entries(r, rec.threads);
      visit(rec, entries);
      detail::skip_rest(entries);
      break;
    }
    default: {
      if (tag >= tag_alloc && tag < tag_alloc + 8) {
        alloc_record rec;
        rec.kind = static_cast<alloc_kind>(tag - tag_alloc);
        rec.dt = b.event_dt(r);
        rec.size = r.varint();
        if (b.stack_deltas) {
          b.stack += static_cast<std::uint64_t>(r.svarint());
          rec.stack = b.stack;
        } else {
          rec.stack = r.varint();
        }
        visit(rec);
        break;
      }
      if (b.anchors && tag >= tag_free_kept_from && tag < tag_free_kept_from + kept_anchors) {
        free_kept_record rec;
        rec.dt = b.event_dt(r);
        const unsigned k = tag - tag_free_kept_from;
        rec.ordinal = b.kept_anchor[k] + static_cast<std::uint64_t>(r.svarint());
        move_anchors(b.kept_anchor, k, rec.ordinal);
        visit(rec);
        break;
      }
      static const char hex[] = "0123456789abcdef";
      char what[] = "unknown record tag 0x??";
      what[sizeof what - 3] = hex[tag >> 4];
      what[sizeof what - 2] = hex[tag & 15];
      r.fail(what);
    }
  }
  return tag;
}

}  // namespace lowalloc::trace_format

#endif
