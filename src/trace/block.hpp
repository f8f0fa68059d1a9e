// The thread's current block and how events are encoded into it, in the records of
// records.hpp: the TIME that opens a block, ALLOC with its STACK, FREE or FREE_LOCAL, and the
// ADDRESSES that close it. Allocations not yet freed in the block are kept in a block-local
// table, so that a free of one of them names it by its distance instead of its address. The
// free path and the buffer's bookkeeping are inline: every event takes them.
#ifndef LOWALLOC_SRC_TRACE_BLOCK_HPP
#define LOWALLOC_SRC_TRACE_BLOCK_HPP

#include "trace/clock.hpp"
#include "trace/format.hpp"
#include "trace/records.hpp"
#include "trace/sink.hpp"
#include "trace/thread_state.hpp"
#include "trace/unwind.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>

#pragma GCC visibility push(hidden)

namespace lowalloc::trace {

// Room for `bytes` more in the block (the block is flushed if needed), beyond what the pending
// frees' records hold (32 bytes each); returns where to write.
inline unsigned char* ensure_space(thread_state* t, std::size_t bytes) {
  if (t->pos + bytes + 32 * std::size_t{t->pending_count} > t->limit) flush(t, false);
  return t->buffer + t->pos;
}

inline void commit(thread_state* t, const unsigned char* end) {
  t->pos = static_cast<std::size_t>(end - t->buffer);
}

// The delta of a timed record; time never runs backwards within a stream.
inline std::uint64_t take_dt(thread_state* t, std::uint64_t ticks) {
  if (ticks < t->clock) return 0;
  std::uint64_t dt = ticks - t->clock;
  t->clock = ticks;
  return dt;
}

// The time of an event record (ALLOC, FREE, FREE_LOCAL, FREE_KEPT) about to be written: its dt,
// when not 0, goes to the block's tick section. Once the section is full, the next record ends the
// block (ensure_space).
inline void event_time(thread_state* t, std::uint64_t ticks) {
  const std::uint64_t dt = take_dt(t, ticks);
  if (LOWALLOC_UNLIKELY(dt != 0)) {
    t->tick_gaps[t->tick_count] = t->block_events - t->last_ticked;
    t->tick_dts[t->tick_count] = dt;
    t->last_ticked = t->block_events;
    if (++t->tick_count == tick_capacity) t->limit = 0;
  }
  ++t->block_events;
}

// Opens a block with TIME and empties the block-local table.
void begin_block(thread_state* t);

// Closes a block with ADDRESSES, the addresses of its allocations it did not free, by ordinal;
// or, when the thread keeps them, with KEPT; then its tick section. Written into the trailer space
// beyond buffer_bytes, reserved for it.
void end_block(thread_state* t);

void write_thread_record(thread_state* t);

// Frees that carry an address bump a counter per address hash. A thread's block-local entry is
// valid only while the counter is what it was at the allocation: if another thread freed the block
// (and the address came back to this thread through another allocation), the entry is stale and
// the free must carry its address. One relaxed load per allocation and per local free, one
// relaxed increment per free with an address; the coherence of each counter orders them.
//
// While the process has one thread no entry can be stale, and an allocation stores unknown_epoch
// instead of reading its counter: the table (64 KiB, read at a line chosen by the address) then
// stays out of the caches of a program that never starts a thread (cachegrind, a 48 KiB first
// level and a 2 MiB last: 5 to 11% fewer of the first level's misses that the recorder adds to
// perl, python3 and ninja, 2 to 6% fewer of the last level's). Such an entry
// is local at a free while the process still has one thread (many_threads, which never goes back
// to false but in a fork child, whose table starts empty). Once another thread has started, the
// entry cannot be told from a stale one, and the free is recorded as a stale one's is: with its
// address, the entry's address going to ADDRESSES; only the frees of the block the second thread
// started in. (A thread that frees a block first makes many_threads true, then frees it; for the
// address to come back to the first thread, malloc's lock and the program's own synchronisation
// come between, so that thread reads it true.)
inline constexpr std::size_t free_epoch_buckets = 16384;
extern std::atomic<std::uint32_t> free_epochs[free_epoch_buckets];

inline std::atomic<std::uint32_t>& free_epoch(std::uintptr_t addr) {
  return free_epochs[((addr >> 4) * 0x9E3779B97F4A7C15u) >> (64 - 14)];
}
// The epoch an allocation of `addr` stores in its block-local entry.
inline std::uint32_t epoch_at_alloc(std::uintptr_t addr) {
  if (!many_threads.load(std::memory_order_relaxed)) return unknown_epoch;
  return free_epoch(addr).load(std::memory_order_relaxed) & epoch_mask;
}

inline std::size_t local_slot(std::uintptr_t addr) {
  return static_cast<std::size_t>(((addr >> 4) * 0x9E3779B97F4A7C15u) >> 52) & (local_capacity - 1);
}

// Starts fetching the lines an allocation of `addr` reads in the thread's and the process's
// tables at its end: in a program whose blocks are spread over a large heap each may miss the
// cache, and the misses then overlap with the stack walk.
__attribute__((always_inline)) inline void prefetch_address(const thread_state* t,
                                                            std::uintptr_t addr) {
  __builtin_prefetch(&t->local[local_slot(addr)]);
  if (many_threads.load(std::memory_order_relaxed)) __builtin_prefetch(&free_epoch(addr));
}

// A FREE's order, for the block's ORDERS; once the column is full, the next record ends the block.
inline void note_free_order(thread_state* t, std::uint64_t order) {
  t->free_orders_pos = static_cast<std::size_t>(
      t->free_order_deltas.encode(t->free_orders + t->free_orders_pos, order) - t->free_orders);
  ++t->free_count;
  if (LOWALLOC_UNLIKELY(t->free_orders_pos + trace_format::max_varint_bytes > free_orders_bytes))
    t->limit = 0;
}

// Removes entry `hole` of the block-local table.
void local_erase(thread_state* t, std::size_t hole);

// Where a hook was called from: its return address, the stack pointer after it returns, and the
// caller's rbp (saved by the hook's own frame-pointer prologue). The walk starts there.
struct caller_frame {
  std::uintptr_t pc;
  std::uintptr_t sp;
  std::uintptr_t rbp;
};

#define LOWALLOC_CALLER_FRAME()                                            \
  caller_frame {                                                           \
    reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)),         \
        reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) + 16, \
        *static_cast<const std::uintptr_t*>(__builtin_frame_address(0))    \
  }

// Starts fetching the first line that the walk from `from` reads, the set of walks remembered from
// that leaf frame: a hook calls it before the allocator, whose work then covers the fetch (the
// compare of that line's keys had a tenth of record_alloc's samples in python3 building a dict).
// Always inline: a prefetch has no effect that GCC's analysis counts, and a call of a function
// that only prefetches was removed as a call of a pure function.
__attribute__((always_inline)) inline void prefetch_walk_set(const thread_state* t,
                                                             const caller_frame& from) {
  __builtin_prefetch(unwind_walk_set(t->walk_sets, from.pc, from.sp));
}

// ALLOC of `size` bytes at `ptr`, with the stack that `from` starts (and its STACK if new). Out
// of line: the hooks stay small for the events they do not record.
__attribute__((noinline)) void record_alloc(thread_state* t, trace_format::alloc_kind kind,
                                            std::size_t size, void* ptr, const caller_frame& from);

// The slot of `addr` in the block-local table: its entry, or the empty slot where it would go.
inline std::size_t local_find(const thread_state* t, std::uintptr_t addr) {
  std::size_t i = local_slot(addr);
  while (t->local[i].addr != 0 && t->local[i].addr != addr) i = (i + 1) & (local_capacity - 1);
  return i;
}

// What realloc learns of its free before the call (a free taken after would come after the
// memory went back): whether it will be a FREE_LOCAL, else its order.
struct free_before {
  bool local;
  std::uint64_t order;
};

// What a free of `addr` makes of its block-local entry, in slot `i` of the table.
enum class entry_state {
  current,      // the entry is the allocation freed
  stale,        // it may not be (free_epoch): the free carries its address, the entry goes to
                // ADDRESSES
  block_ended,  // the block ended first: the table is empty, the free carries its address
};
// An entry made while the process had one thread, freed once it has another, may be stale
// (free_epoch, above). While this thread still keeps its blocks (another started without a hook
// in this one: it stops keeping when its next block begins, sink.cpp), a free with an address of
// an allocation of its own block would find no address to name when the block's allocations go
// to the kept table (KEPT lists none): the block ends first instead, the entry goes to the kept
// table, and the list of live blocks that stopping writes names its address.
inline entry_state check_entry(thread_state* t, std::size_t i, std::uintptr_t addr) {
  const local_entry& e = t->local[i];
  if (e.epoch() != unknown_epoch)
    return (free_epoch(addr).load(std::memory_order_relaxed) & epoch_mask) == e.epoch()
               ? entry_state::current
               : entry_state::stale;
  if (LOWALLOC_LIKELY(!many_threads.load(std::memory_order_relaxed))) return entry_state::current;
  if (!t->keeps) return entry_state::stale;
  flush(t, false);
  return entry_state::block_ended;
}

// The free of `ptr`, about to happen: room for its record (and for the ALLOC of realloc's result,
// so that recording them does not end the block first and empty the block-local table), and
// whether it is of an allocation of this block that no other thread freed, else its order
// (order_free). This thread owns `ptr`: no other thread can make its entry stale meanwhile.
inline free_before prepare_free(thread_state* t, const void* ptr) {
  ensure_space(t, 32 + 48);
  const auto addr = reinterpret_cast<std::uintptr_t>(ptr);
  const std::size_t i = local_find(t, addr);
  if (t->local[i].addr == addr) {
    const entry_state state = check_entry(t, i, addr);
    if (state == entry_state::current) return free_before{true, 0};
    if (state == entry_state::block_ended) ensure_space(t, 32 + 48);
  }
  return free_before{false, order_free()};
}

// The record of a free of `addr` that was not in the block-local table, at `p` (room for it is
// there): FREE_KEPT when the thread keeps the block, else FREE, of order `before`'s, else its
// own. Returns the record's end.
__attribute__((always_inline)) inline unsigned char* encode_free_far(thread_state* t,
                                                                     unsigned char* p,
                                                                     std::uintptr_t addr,
                                                                     const free_before* before) {
  std::uint64_t ordinal;
  if (t->keeps && kept_take(t->kept, addr, &ordinal))
    return trace_format::encode_from_anchor(p, trace_format::free_kept_record{0, ordinal},
                                            t->encoding);
  const std::uint64_t order = before != nullptr ? before->order : order_free();
  free_epoch(addr).fetch_add(1, std::memory_order_relaxed);
  p = trace_format::encode(p, trace_format::free_record{0, addr}, t->encoding);
  note_free_order(t, order);
  return p;
}

// Records the thread's pending frees (thread_state::pending_addr), oldest first, in the room the
// block holds for them: before any other record of the thread, and at the block's end.
void settle_frees(thread_state* t);

// Room for `bytes` of a record that is not an event's (ensure_space), after the pending frees,
// which came before it: an EXEC or END after them would end the image before its last frees.
inline unsigned char* record_space(thread_state* t, std::size_t bytes) {
  if (t->pending_count != 0) settle_frees(t);
  return ensure_space(t, bytes);
}

// Whether a free not in the block-local table may wait for its lookup in the kept table: the
// thread keeps blocks, the process has no other thread, and the block has room for the tick and
// the order of each pending free, of this one and of the event that records them, which does not
// look again (their records' room is held by ensure_space).
// A free found not kept takes its order when it is recorded, after the memory went back: no other
// thread can have allocated that address meanwhile, as every start of one records the pending
// frees first (stop_keeping); only a thread made by the clone system call itself, unseen until
// its first event, could, between this free and this thread's next event.
inline bool may_defer_free(const thread_state* t) {
  return t->keeps && t->kept.count != 0 && !many_threads.load(std::memory_order_relaxed) &&
         t->tick_count + t->pending_count + 1 < tick_capacity &&
         t->free_orders_pos + (t->pending_count + 2) * trace_format::max_varint_bytes <=
             free_orders_bytes;
}

// Makes the free of `addr` at `ticks` pending, its kept slot fetched; when pending_capacity are
// pending already, the oldest is recorded first. Out of line: the hooks stay small.
__attribute__((noinline)) void defer_free(thread_state* t, std::uintptr_t addr,
                                          std::uint64_t ticks);

// FREE_LOCAL when `ptr` is an allocation of this block that no other thread freed, FREE_KEPT
// when it is one the thread keeps, else FREE. `before`: what prepare_free() found before the
// memory went back (realloc); else the FREE takes its order here. Always inline: called, it
// saved and restored six registers for every free (17 instructions of the ~110 that record one).
// A free that would look in the kept table waits instead (defer_free): its slot's line is fetched
// while the program goes on, and the lookup is made at the thread's next event. A program that
// tears down a tree of blocks it kept frees them in an order unlike their addresses', and each
// lookup missed the caches.
__attribute__((always_inline)) inline void record_free(thread_state* t, void* ptr,
                                                       std::uint64_t ticks,
                                                       const free_before* before = nullptr) {
  t->has_events = true;
  unsigned char* p = ensure_space(t, 32);
  auto addr = reinterpret_cast<std::uintptr_t>(ptr);
  std::size_t i = local_find(t, addr);
  bool local = t->local[i].addr == addr;
  // (With `before`, the epoch may have moved since, for another address of its bucket.)
  const entry_state state = !local ? entry_state::current
                            : before != nullptr
                                ? (before->local ? entry_state::current : entry_state::stale)
                                : check_entry(t, i, addr);
  if (state == entry_state::stale) {
    // Stale: another thread freed this allocation, and this free is of a later allocation at the
    // same address. The old one's address goes to ADDRESSES; this free carries its address.
    t->evicted[t->evicted_count++] = t->local[i];
    local_erase(t, i);
    local = false;
  } else if (LOWALLOC_UNLIKELY(state == entry_state::block_ended)) {
    p = ensure_space(t, 32);
    i = local_find(t, addr);
    local = false;
  }
  if (!local && before == nullptr && may_defer_free(t)) {
    defer_free(t, addr, ticks);
    return;
  }
  if (t->pending_count != 0) {
    settle_frees(t);
    p = t->buffer + t->pos;
  }
  event_time(t, ticks);
  if (local) {
    std::uint32_t distance = t->alloc_ordinal - 1 - t->local[i].ordinal();
    p = trace_format::encode(p, trace_format::free_local_record{0, distance});
    local_erase(t, i);
  } else {
    p = encode_free_far(t, p, addr, before);
  }
  commit(t, p);
}

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_BLOCK_HPP
