// Each thread's recorder state: its two block buffers, its block-local allocation table, its
// clock, its stack bounds and stack ids, in one mmap'd region made at the thread's first event.
// enter() and leave() frame every recorded event: they keep the recorder's own allocations out
// of the trace (a thread-local guard), set the state up on first use and mark the thread as
// inside an event, so that the process's exit can write the blocks of threads still running
// (close_other_threads). Inline: every event goes through them.
#ifndef LOWALLOC_SRC_TRACE_THREAD_STATE_HPP
#define LOWALLOC_SRC_TRACE_THREAD_STATE_HPP

#include "trace/clock.hpp"
#include "trace/kept.hpp"
#include "trace/os.hpp"
#include "trace/records.hpp"
#include "trace/sink.hpp"
#include "trace/stack_table.hpp"
#include "trace/unwind.hpp"

#include <pthread.h>

#include <atomic>
#include <csignal>
#include <cstddef>
#include <cstdint>

#pragma GCC visibility push(hidden)

namespace lowalloc::trace {

// A block's events: half a MiB. Each block costs 30 bytes or so of headers, and more for what a
// block's start repeats (TIME, the tick section): with 64 KiB, a program that repeats one loop
// wrote 2.3 times the trace, with 256 KiB 1.2 times.
inline constexpr std::size_t buffer_bytes = 512 * 1024;
// Allocations of the current block not yet freed in it. A free of one of them names it by its
// distance instead of its address (FREE_LOCAL); the addresses of the others are written once, at
// the end of the block (ADDRESSES). The block ends early when the table is half full.
inline constexpr std::size_t local_capacity = 4096;
inline constexpr std::size_t local_limit = local_capacity / 2;
// The events of a block whose dt is not 0 (the block's tick section); the block ends early when
// they fill the list, which takes 1,024 events at least 65 us apart (a clang++ compile's blocks
// have 947 at most, 46 in the median; flush_interval_ticks ends most blocks before).
inline constexpr std::size_t tick_capacity = 1024;
// The orders of the block's FREEs (the ORDERS record's first column), as deltas: the block ends
// early when they fill it, which takes 6,553 FREEs at least (a free of another thread's block
// mostly takes 1 byte here).
inline constexpr std::size_t free_orders_bytes = 64 * 1024;
// Beyond buffer_bytes: ADDRESSES (or KEPT), ORDERS and the tick section; whole cache lines, as
// the thread's mapping lays out what follows the buffers (the block-local tables) by them.
inline constexpr std::size_t trailer_bytes =
    (16 + local_limit * 16 +  // ADDRESSES or KEPT
     32 + free_orders_bytes + trace_format::max_varint_bytes + local_limit * 3 +  // ORDERS
     trace_format::tick_section_bytes(tick_capacity) + 63) &
    ~std::size_t{63};
inline constexpr std::uint64_t flush_interval_ticks = std::uint64_t{1} << 12;  // 0.25-0.55 s
// Frees of blocks from earlier blocks whose lookups in the kept table are under way (block.hpp,
// record_free): the table is far larger than the caches, and a program that frees its blocks in
// an order of their own (a tree torn down) missed at every take.
inline constexpr std::uint32_t pending_capacity = 8;

// 16 bytes: the table is probed at every event. A block holds fewer than 2^24 ALLOC records (each
// takes 3 bytes at least); an order is the block's order_base plus less than 2^20 (the block ends
// before); the epoch is compared for equality only, and 2^20 frees of one bucket in one block (a
// quarter of a second) would take 17 billion frees with an address.
inline constexpr std::uint64_t order_span = (std::uint64_t{1} << 20) - 1;
static_assert(buffer_bytes / 3 < (std::size_t{1} << 24), "ordinals fit local_entry::ordinal");
inline constexpr std::uint32_t ordinal_mask = (1u << 24) - 1;
inline constexpr std::uint32_t epoch_mask = (1u << 20) - 1;
// The epoch of an entry made while the process had one thread (block.hpp, free_epoch); a counter
// that reads so is taken for it, which costs only the size of a free's record.
inline constexpr std::uint32_t unknown_epoch = epoch_mask;

// The three numbers are packed by hand, not as bit-fields: GCC stored a bit-field entry as a
// 4-byte store and then a read of the whole word back, which stalled on store forwarding at
// every allocation (the instruction after that read had 41% of record_alloc's samples).
struct local_entry {
  std::uintptr_t addr;  // 0: empty
  std::uint64_t bits;   // ordinal | order << 24 | epoch << 44

  /// `ordinal` in the block; `order`: the ALLOC's order (clock.hpp) less the block's order_base;
  /// `epoch`: free_epoch() of the address when it was allocated. Each is cut to its bits.
  static local_entry make(std::uintptr_t addr, std::uint64_t ordinal, std::uint64_t order,
                          std::uint64_t epoch) noexcept {
    return local_entry{
        addr, (ordinal & ordinal_mask) | (order & order_span) << 24 | (epoch & epoch_mask) << 44};
  }
  std::uint32_t ordinal() const noexcept { return static_cast<std::uint32_t>(bits & ordinal_mask); }
  std::uint64_t order() const noexcept { return bits >> 24 & order_span; }
  std::uint32_t epoch() const noexcept { return static_cast<std::uint32_t>(bits >> 44); }
};

struct thread_state {
  unsigned char* buffer;      // buffers[0] or buffers[1]: the one being filled
  unsigned char* buffers[2];  // the other may be with the writer thread
  bool busy[2];               // under writer_mutex
  std::size_t pos;
  std::size_t limit;    // the block ends before pos passes it: buffer_bytes, 0 once ticks are full
  std::uint64_t clock;  // ticks of the last timed record
  std::uint64_t block_start;              // ticks of the block's TIME record
  trace_format::block_encoding encoding;  // FREE addresses are deltas within a block
  local_entry* local;                     // local_capacity entries, linear probing
  local_entry* scratch;                   // local_limit entries, for sorting at the block's end
  local_entry* evicted;  // allocations whose address this thread received again: another
                         // thread freed them, so they are listed in ADDRESSES
  std::size_t local_count;
  std::size_t evicted_count;
  std::uint32_t alloc_ordinal;  // ALLOC records in this block
  std::uint32_t block_events;   // ALLOC, FREE, FREE_LOCAL and FREE_KEPT records in this block
  std::uint32_t last_ticked;    // the index among them of the last with a tick (0: none yet)
  std::uint32_t tick_count;     // of tick_gaps and tick_dts
  std::uint64_t ordinal_base;   // ALLOC records in the stream before this block
  std::uint64_t order_base;     // order_now() when the block began
  unsigned char* free_orders;   // free_orders_bytes: the block's FREEs' orders (ORDERS)
  std::size_t free_orders_pos;
  std::uint32_t free_count;  // FREE records in this block
  trace_format::order_list_encoder free_order_deltas;
  // While the process has one thread: its allocations that outlive their block, by address
  // (kept.hpp). Frees of them name them by ordinal (FREE_KEPT).
  bool keeps;
  kept_table kept;
  // Its frees not yet recorded, oldest first from pending_head (a ring): each of an address that
  // was not in the block-local table, its kept slot fetched. Their records come before any other
  // event's, and before the block ends (settle_frees). Room for their records, ticks and orders
  // is held in the block meanwhile (may_defer_free).
  std::uint32_t pending_count;
  std::uint32_t pending_head;
  std::uintptr_t pending_addr[pending_capacity];
  std::uint64_t pending_ticks[pending_capacity];
  std::uint32_t clock_countdown;  // an event reads the clock when this reaches 0
  bool has_events;                // an ALLOC or FREE since the stream (or the fork child) began
  std::uint32_t stream;
  std::uint32_t generation;
  std::uintptr_t stack_lo;  // the mapping of the thread's own stack; [lo, hi) is readable
  std::uintptr_t stack_hi;
  std::uintptr_t other_lo[4];  // other stacks it ran on (fibers, sigaltstack), round robin
  std::uintptr_t other_hi[4];
  unsigned other_next;
  unwind_cache* cache;
  const unsigned char* walk_sets;  // unwind_walk_sets(cache), for prefetch_walk_set
  // Set by the thread around each event; read by the thread that closes the others at exit, and
  // by the writer thread that writes an idle thread's block (write_idle_blocks).
  std::atomic<bool> active;
  // Set by the writer thread while it may write this thread's block for it: the thread waits
  // before its next event (mark_active).
  std::atomic<bool> taken;
  thread_state* next_live;  // the list of live states, under live_mutex
  thread_state* prev_live;
  stack_table stacks;
  std::uint64_t tid;  // of the THREAD record (cold: read by the crash handler only)
  // The block's tick section (trace_format::encode_ticks), written when the block ends.
  std::uint32_t tick_gaps[tick_capacity];
  std::uint64_t tick_dts[tick_capacity];
};

extern __thread thread_state* tls_state;
extern __thread bool tls_guard;
// A signal that ends the process (crash.cpp) and arrived while tls_guard was set: acted on as
// the thread leaves the recorder (release_guard), where its block is whole and it holds no lock.
extern __thread volatile std::sig_atomic_t tls_pending_signal;
extern __thread bool tls_dead;  // thread-exit flush done: later events are counted as lost

extern std::atomic<bool> tracing;
extern std::atomic<std::uint32_t> next_stream;
extern std::atomic<std::uint32_t> module_generation;  // bumped when a module is unloaded
extern std::atomic<std::uint64_t> lost_events;
extern pthread_key_t thread_key;  // its destructor flushes an exiting thread
// Set once the process's exit writes the other threads' blocks: their later events are not
// recorded (they come after the trace's end).
extern std::atomic<bool> closing;
// Set when the process gets a second thread: from then on a block may be freed by a thread other
// than the one that allocated it, and no thread keeps blocks by ordinal.
extern std::atomic<bool> many_threads;

// Maps and sets up the calling thread's state, its first block begun; nullptr without memory.
thread_state* create_thread_state();

// In a thread the recorder starts (counted_thread_main), before the program's start routine: the
// bounds of its stack from its descriptor, for create_thread_state, which otherwise reads
// /proc/self/maps. Not from inside a hook: pthread_getattr_np calls realloc with the thread's
// lock held, and the hook would then wait for that lock (a JVM thread reads its own attributes
// before it allocates).
void note_thread_stack();
void release_thread_state(thread_state* t);

// At the process's exit or exec, from the thread that leaves: ends the blocks of every other
// thread still running (each once it is outside an event, waiting at most a second, else its
// block counts as lost) and hands them to the writer. Their later events come after the trace's
// end. `final`: the states are done with (an exit); else each begins a new block, in which its
// thread records again if reopen_other_threads() is called (an exec that failed).
void close_other_threads(thread_state* self, bool final = true);

// From the writer thread, every half second: the threads that have recorded events and none for
// idle_ticks (config.hpp) get their blocks written for them, so that a program killed by SIGKILL
// (or ended by exit_group) while a thread waits (a server between requests) loses at most the last
// second of that thread's events, not all since its block began. Skipped while another thread
// holds the list of threads (an exit closing them, which may wait for the writer).
void write_idle_blocks();

// After an exec that failed: the other threads record again. Their events since
// close_other_threads are counted as lost.
void reopen_other_threads();

// From the crash handler: up to `cap` of the threads other than `self` whose current block holds
// events, into `out` (tid, ALLOC records, bytes of events after the block's TIME), and the sums
// over all of them. Takes the list's lock without blocking; false when it was not free by
// `deadline_ns` or there were more than `cap` (the list is then incomplete).
bool unwritten_threads(const thread_state* self, trace_format::crash_thread* out, std::size_t cap,
                       std::size_t* listed, std::uint64_t deadline_ns);

// The bytes of events in `t`'s current block after the TIME record that opens it, and 3 for each
// pending free (the least a free's record takes).
std::size_t block_event_bytes(const thread_state* t);

// The process has another thread now, or is about to: the kept allocations' addresses are
// written (LIVE) and later frees of them carry their address.
void stop_keeping(thread_state* t);

// Around fork: the list of live states is kept whole; the child keeps only its own thread's.
void live_fork_prepare();
void live_fork_parent();
void live_fork_child();

// A module was unloaded: cached unwind rules and stack ids may name reused addresses. Forgets
// them (ids go on: the process table gives new ones).
void forget_stacks(thread_state* t);

// The [lo, hi) mapping that contains `address`, from /proc/self/maps; false if not found.
bool mapping_range(std::uintptr_t address, std::uintptr_t* lo_out, std::uintptr_t* hi_out);

// The top of the mapping that holds `sp`: the thread's own stack, or a fiber's or an alternate
// signal stack (looked up in /proc/self/maps once, then cached). 0 when unknown: no stack then,
// since the unwinder assumes [sp, top) is readable.
inline std::uintptr_t stack_top(thread_state* t, std::uintptr_t sp) {
  if (LOWALLOC_LIKELY(sp >= t->stack_lo && sp < t->stack_hi)) return t->stack_hi;
  for (unsigned k = 0; k < 4; ++k)
    if (sp >= t->other_lo[k] && sp < t->other_hi[k]) return t->other_hi[k];
  std::uintptr_t lo = 0, hi = 0;
  if (!mapping_range(sp, &lo, &hi)) return 0;
  unsigned k = t->other_next++ & 3;
  t->other_lo[k] = lo;
  t->other_hi[k] = hi;
  return hi;
}

// Starts tracing at the process's first hooked call, before the recorder's constructor when the
// initialiser of another library allocates (lifecycle.cpp). True if tracing is on.
bool start_on_first_call();

// An event that began after the process's exit closed this thread's state: after the trace's
// end, not recorded.
thread_state* closed_event(thread_state* t);

// The slow path of mark_active: while the writer thread holds the state (`taken`), the thread
// waits outside an event; then as mark_active.
bool wait_until_given_back(thread_state* t);

// Marks the thread inside an event, then reads `closing`: false when the process's exit has
// closed the thread's state, which must then not be written. The exiting thread's
// process_barrier() makes sure that either it sees the mark or this thread sees `closing`, so a
// compiler barrier is all the fast path needs. The same holds for `taken`, which the writer
// thread sets to write the block of a thread that has been idle (write_idle_blocks).
inline bool mark_active(thread_state* t) {
  t->active.store(true, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (LOWALLOC_UNLIKELY(closing.load(std::memory_order_relaxed) |
                        t->taken.load(std::memory_order_acquire)))
    return wait_until_given_back(t);
  return true;
}

// Out of the event: what it wrote is visible to the thread that sees the mark cleared.
inline void mark_inactive(thread_state* t) { t->active.store(false, std::memory_order_release); }

// Whether every thread of the program counted (lifecycle.cpp) has ended: the thread that runs
// anything now ends the process.
bool program_threads_ended();

// Ends the process by the signal tls_pending_signal names, after writing the trace (crash.cpp).
void deliver_pending_signal();

// Sets the guard back to `previous`; when that clears it, a signal deferred meanwhile is acted on
// now. The fences keep what the thread wrote inside before the store, and the store before the
// load: a signal between them sees the guard clear and is acted on in its handler.
inline void release_guard(bool previous = false) {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  tls_guard = previous;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (LOWALLOC_UNLIKELY(!previous && tls_pending_signal != 0)) deliver_pending_signal();
}

// The calling thread's state, set up on first use; nullptr when this event is not recorded (the
// recorder itself is running, tracing is off, or the thread has finished). Always inline: with
// link-time optimisation GCC made it a function of its own, called by every hook.
__attribute__((always_inline)) inline thread_state* enter() {
  if (LOWALLOC_UNLIKELY(tls_guard || !tracing.load(std::memory_order_relaxed)))
    if (tls_guard || !start_on_first_call()) return nullptr;
  tls_guard = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);  // before anything the event writes
  thread_state* t = tls_state;
  if (LOWALLOC_UNLIKELY(t == nullptr)) {
    // A thread past its own end: its events are lost, unless every other thread of the program
    // has ended, and glibc ends the process in this one (its atexit handlers, its destructors).
    if (tls_dead && !program_threads_ended()) {
      lost_events.fetch_add(1, std::memory_order_relaxed);
      release_guard();
      return nullptr;
    }
    tls_dead = false;
    t = create_thread_state();
    if (t == nullptr) {
      lost_events.fetch_add(1, std::memory_order_relaxed);
      release_guard();
      return nullptr;
    }
    tls_state = t;
  }
  if (LOWALLOC_UNLIKELY(!mark_active(t))) return closed_event(t);
  if (LOWALLOC_UNLIKELY(t->generation != module_generation.load(std::memory_order_acquire))) {
    t->generation = module_generation.load(std::memory_order_acquire);
    forget_stacks(t);
  }
  return t;
}

// Events mostly reuse the shared stamp; every 8th event of a thread reads the clock, so time moves
// on in every thread that records anything (a stamp lags the clock by at most 7 of the thread's
// events; causality does not depend on it).
inline std::uint64_t stamp_event(thread_state* t) {
  if (LOWALLOC_UNLIKELY(t->clock_countdown-- == 0)) {
    t->clock_countdown = 7;
    return stamp_now();
  }
  return stamp_shared();
}

inline void leave(thread_state* t) {
  if (LOWALLOC_UNLIKELY(t->clock - t->block_start > flush_interval_ticks)) flush(t, false);
  mark_inactive(t);
  release_guard();
}

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_THREAD_STATE_HPP
