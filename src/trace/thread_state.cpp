// Setting up, resetting and releasing a thread's state (thread_state.hpp).
#include "trace/thread_state.hpp"

#include "trace/block.hpp"
#include "trace/config.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace lowalloc::trace {

namespace fmt = lowalloc::trace_format;

__thread thread_state* tls_state;
__thread bool tls_guard;
__thread volatile std::sig_atomic_t tls_pending_signal;
__thread bool tls_dead;

std::atomic<bool> tracing{false};
std::atomic<std::uint32_t> next_stream{1};
std::atomic<std::uint32_t> module_generation{0};
std::atomic<std::uint64_t> lost_events{0};
pthread_key_t thread_key;
std::atomic<bool> closing{false};
std::atomic<bool> many_threads{false};

namespace {

// Events not recorded since close_other_threads: lost if an exec that failed reopens the threads.
std::atomic<std::uint64_t> events_after_close{0};

// Every thread's state from its first event to its exit, for the process's exit to close.
pthread_mutex_t live_mutex = PTHREAD_MUTEX_INITIALIZER;
thread_state* live_head = nullptr;

// Adds `t`; false when it is not the only one.
bool add_live(thread_state* t) {
  pthread_mutex_lock(&live_mutex);
  const bool only = live_head == nullptr;
  t->prev_live = nullptr;
  t->next_live = live_head;
  if (live_head != nullptr) live_head->prev_live = t;
  live_head = t;
  pthread_mutex_unlock(&live_mutex);
  return only;
}

void remove_live(thread_state* t) {
  pthread_mutex_lock(&live_mutex);
  if (t->prev_live != nullptr)
    t->prev_live->next_live = t->next_live;
  else if (live_head == t)
    live_head = t->next_live;
  if (t->next_live != nullptr) t->next_live->prev_live = t->prev_live;
  pthread_mutex_unlock(&live_mutex);
}

// Waits until `t`'s thread is outside an event; false after a second (it is stopped, or blocked
// in a signal handler that interrupted it inside the recorder).
bool wait_until_inactive(thread_state* t) {
  std::uint64_t deadline = monotonic_ns() + 1000000000;
  for (unsigned spins = 0; t->active.load(std::memory_order_acquire); ++spins) {
    if (spins < 64) continue;
    if (monotonic_ns() > deadline) return false;
    sched_yield();
  }
  return true;
}

// One mapping per thread: the state, the unwind cache, two buffers (each with its ADDRESSES
// trailer), the block-local tables and the first stack table. The state and the cache's rules
// start at page boundaries: a fork child keeps them (the rules hold for its modules, which are
// the parent's, and cost a walk of the unwind tables to find again), and reads all the rest as
// zero (wipe_on_fork). Zero is no walk remembered; a traced child begins its block and its tables
// afresh before it writes them.
constexpr std::size_t page_bytes = 4096;
constexpr std::size_t state_bytes = (sizeof(thread_state) + page_bytes - 1) & ~(page_bytes - 1);

std::size_t thread_mapping_bytes() {
  std::size_t cache_bytes = (unwind_cache_bytes() + 63) & ~std::size_t{63};
  return state_bytes + cache_bytes + 2 * (buffer_bytes + trailer_bytes) +
         (local_capacity + 2 * local_limit) * sizeof(local_entry) + free_orders_bytes +
         first_table_capacity * sizeof(stack_entry);
}

}  // namespace

// Reads /proc/self/maps rather than calling pthread_getattr_np: that function takes the thread's
// lock and calls realloc, and a thread's first allocation may come from inside it.
bool mapping_range(std::uintptr_t address, std::uintptr_t* lo_out, std::uintptr_t* hi_out) {
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096];
  std::size_t have = 0;
  std::uintptr_t result = 0;
  bool eof = false;
  while (result == 0) {
    if (!eof && have < sizeof buf) {
      ssize_t n = read(fd, buf + have, sizeof buf - have);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        eof = true;
      else
        have += static_cast<std::size_t>(n);
    }
    char* nl = static_cast<char*>(std::memchr(buf, '\n', have));
    if (nl == nullptr) {
      if (eof || have == sizeof buf) break;  // no line end: done, or a line over 4 KiB
      continue;
    }
    // "start-end perms ...": two hex numbers.
    std::uintptr_t lo = 0, hi = 0;
    const char* c = buf;
    auto hex = [&c](std::uintptr_t& v) {
      for (;; ++c) {
        unsigned d;
        if (*c >= '0' && *c <= '9')
          d = static_cast<unsigned>(*c - '0');
        else if (*c >= 'a' && *c <= 'f')
          d = static_cast<unsigned>(*c - 'a' + 10);
        else
          break;
        v = v * 16 + d;
      }
    };
    hex(lo);
    if (*c == '-') {
      ++c;
      hex(hi);
      if (lo <= address && address < hi) {
        result = hi;
        *lo_out = lo;
        *hi_out = hi;
      }
    }
    std::size_t used = static_cast<std::size_t>(nl + 1 - buf);
    std::memmove(buf, nl + 1, have - used);
    have -= used;
  }
  close(fd);
  return result != 0;
}

namespace {

// The calling thread's stack, [lo, hi), from its descriptor (note_thread_stack); 0 when not known.
// /proc/self/maps took 16 system calls for a small program, and a read of it grows with the
// process's mappings (two for each thread's stack and state, live or kept) and takes the lock of
// its address space that page faults take.
__thread std::uintptr_t tls_stack_lo;
__thread std::uintptr_t tls_stack_hi;

// The states of threads that have ended, kept for the next ones (under live_mutex): a program
// that starts a thread per task paid, for each, a new mapping, the faults of every page its
// thread touched, and at the thread's end an munmap, whose flush of other CPUs' TLBs interrupts
// every CPU the process runs on. A state kept here holds no thread's events; its pages stay
// (a few hundred KiB a state where a thread touched them).
constexpr std::size_t spare_capacity = 8;
thread_state* spare_states[spare_capacity];
std::size_t spare_count = 0;

// False when there are enough. The pages of its buffers, which the next thread writes before it
// reads, go back to the system when it needs memory (MADV_FREE, before another thread can take
// the state): a spare state of a busy thread would have kept 1 MiB of them.
bool keep_spare(thread_state* t) {
  pthread_mutex_lock(&live_mutex);
  const bool room = spare_count < spare_capacity;
  pthread_mutex_unlock(&live_mutex);
  if (!room) return false;
  const auto from =
      (reinterpret_cast<std::uintptr_t>(t->buffers[0]) + page_bytes - 1) & ~(page_bytes - 1);
  const auto to = (reinterpret_cast<std::uintptr_t>(t->buffers[1]) + buffer_bytes + trailer_bytes) &
                  ~(page_bytes - 1);
  madvise(reinterpret_cast<void*>(from), to - from, MADV_FREE);
  pthread_mutex_lock(&live_mutex);
  const bool kept = spare_count < spare_capacity;
  if (kept) spare_states[spare_count++] = t;
  pthread_mutex_unlock(&live_mutex);
  return kept;
}

thread_state* take_spare() {
  pthread_mutex_lock(&live_mutex);
  thread_state* t = spare_count != 0 ? spare_states[--spare_count] : nullptr;
  pthread_mutex_unlock(&live_mutex);
  return t;
}

// Empties spare state `t` to what a fresh mapping holds, but for its first stack table (emptied
// where the state is laid out: a table that grew was another mapping, gone with the thread), for
// what a new state writes before it reads (the buffers, the sort's room, the ORDERS column) and
// for the unwinder's rules and remembered walks: those are facts about the code and about stack
// contents that a walk checks before it trusts them, and stay unless a module was unloaded since
// (they may name its addresses; `generation` is the module generation the new state starts at).
// The stack table's generation goes on, so that no remembered walk gives an id from the thread
// before.
void empty_spare(thread_state* t, std::uint32_t generation) {
  const bool local_used = t->local_count != 0;
  const std::uint32_t stacks_generation = t->stacks.generation;
  if (local_used) std::memset(t->local, 0, local_capacity * sizeof(local_entry));
  unwind_cache* cache = t->cache;
  if (t->generation != generation) unwind_cache_clear(cache);
  std::memset(static_cast<void*>(t), 0, sizeof(thread_state));
  t->stacks.generation = stacks_generation + 1;
}

}  // namespace

void note_thread_stack() {
  const bool guard = tls_guard;
  tls_guard = true;  // its realloc is glibc's own, not the program's
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* base = nullptr;
    std::size_t size = 0;
    if (pthread_attr_getstack(&attr, &base, &size) == 0) {
      tls_stack_lo = reinterpret_cast<std::uintptr_t>(base);
      tls_stack_hi = tls_stack_lo + size;
    }
    pthread_attr_destroy(&attr);
  }
  release_guard(guard);
}

thread_state* create_thread_state() {
  std::size_t cache_bytes = (unwind_cache_bytes() + 63) & ~std::size_t{63};
  // Read once: a dlclose in another thread meanwhile must leave this state's generation behind,
  // so that its first event forgets what the unwinder kept.
  const std::uint32_t generation = module_generation.load(std::memory_order_acquire);
  auto* mem = reinterpret_cast<unsigned char*>(take_spare());
  const bool spare = mem != nullptr;
  if (spare) {
    empty_spare(reinterpret_cast<thread_state*>(mem), generation);
  } else {
    mem = static_cast<unsigned char*>(map_memory(thread_mapping_bytes()));
    if (mem == nullptr) return nullptr;
    const std::size_t kept_bytes = state_bytes + unwind_cache_rule_bytes();
    wipe_on_fork(mem + kept_bytes, thread_mapping_bytes() - kept_bytes);
  }
  auto* t = reinterpret_cast<thread_state*>(mem);
  unsigned char* at = mem + state_bytes;
  t->cache = unwind_cache_init(at);
  t->walk_sets = unwind_walk_sets(t->cache);
  at += cache_bytes;
  t->buffers[0] = at;
  at += buffer_bytes + trailer_bytes;
  t->buffers[1] = at;
  at += buffer_bytes + trailer_bytes;
  t->buffer = t->buffers[0];
  t->local = reinterpret_cast<local_entry*>(at);
  at += local_capacity * sizeof(local_entry);
  t->scratch = reinterpret_cast<local_entry*>(at);
  at += local_limit * sizeof(local_entry);
  t->evicted = reinterpret_cast<local_entry*>(at);
  at += local_limit * sizeof(local_entry);
  t->free_orders = at;
  at += free_orders_bytes;
  t->stacks.entries = reinterpret_cast<stack_entry*>(at);
  t->stacks.capacity = first_table_capacity;
  if (spare) std::memset(at, 0, first_table_capacity * sizeof(stack_entry));
  t->stream = next_stream.fetch_add(1, std::memory_order_relaxed);
  t->generation = generation;

  // Unknown bounds (0) mean no stacks: the unwinder reads only inside the mapping of the stack.
  const auto frame = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  if (frame >= tls_stack_lo && frame < tls_stack_hi) {
    t->stack_lo = tls_stack_lo;
    t->stack_hi = tls_stack_hi;
  } else {
    mapping_range(frame, &t->stack_lo, &t->stack_hi);
  }
  begin_block(t);
  write_thread_record(t);
  pthread_setspecific(thread_key, t);
  // A second state is a second thread, whether or not it came through pthread_create (the
  // first thread then stops keeping at the end of its block).
  if (!add_live(t)) many_threads.store(true, std::memory_order_relaxed);
  t->keeps = !many_threads.load(std::memory_order_relaxed);
  return t;
}

void stop_keeping(thread_state* t) {
  if (t->pending_count != 0) settle_frees(t);  // while they may still be FREE_KEPT
  t->keeps = false;
  // The entries in the order of their ordinals, where the memory for it can be had: in the
  // table's order (windows spread by a hash) the deltas of both fields were random, and python3's
  // start-up blocks, written out when its first thread started, took 196 kB of a 927 kB trace.
  // In the order they were made, both mostly move by a little.
  const std::size_t count = t->kept.count;
  const std::size_t sorted_bytes = count * sizeof(fmt::live_entry);
  auto* sorted = count != 0 ? static_cast<fmt::live_entry*>(map_memory(sorted_bytes)) : nullptr;
  std::size_t found = 0;
  if (sorted != nullptr) {
    kept_for_each(t->kept, [&](const kept_entry& e) {
      if (found < count) sorted[found++] = fmt::live_entry{e.ordinal(), e.addr()};
    });
    std::sort(sorted, sorted + found, [](const fmt::live_entry& a, const fmt::live_entry& b) {
      return a.ordinal < b.ordinal;
    });
  }
  constexpr std::size_t per_record = 2048;  // 40 KiB at most: fits an empty block
  std::size_t slot = 0;
  std::size_t next = 0;  // in sorted
  for (std::size_t left = sorted != nullptr ? found : count; left != 0;) {
    const std::size_t n = left < per_record ? left : per_record;
    // (A flush here ends the block with ADDRESSES: keeps is off.)
    unsigned char* p = ensure_space(t, 32 + n * 2 * fmt::max_varint_bytes);
    p = fmt::encode(p, fmt::live_record{take_dt(t, stamp_now()), n});
    fmt::live_list_encoder entries;
    for (std::size_t k = 0; k < n;) {
      if (sorted != nullptr) {
        p = entries.encode(p, sorted[next++]);
        ++k;
        continue;
      }
      const kept_entry& e = t->kept.slots[slot++];
      if (e.key() <= kept_removed) continue;
      p = entries.encode(p, fmt::live_entry{e.ordinal(), e.addr()});
      ++k;
    }
    commit(t, p);
    left -= n;
  }
  if (sorted != nullptr) munmap(sorted, sorted_bytes);
  kept_release(t->kept);
}

void release_thread_state(thread_state* t) {
  kept_release(t->kept);
  remove_live(t);
  release_stacks(t->stacks);
  if (!keep_spare(t)) munmap(t, thread_mapping_bytes());
}

thread_state* closed_event(thread_state* t) {
  events_after_close.fetch_add(1, std::memory_order_relaxed);
  mark_inactive(t);
  release_guard();
  return nullptr;
}

void close_other_threads(thread_state* self, bool final) {
  closing.store(true, std::memory_order_relaxed);
  process_barrier();
  pthread_mutex_lock(&live_mutex);
  for (thread_state* t = live_head; t != nullptr; t = t->next_live) {
    if (t == self) continue;
    if (!wait_until_inactive(t)) {
      // Its block cannot be ended safely: what it holds is counted as lost (at least one event
      // per allocation in it).
      lost_events.fetch_add(t->alloc_ordinal + 1, std::memory_order_relaxed);
      continue;
    }
    flush(t, final);
  }
  pthread_mutex_unlock(&live_mutex);
  // Their events from here on come after the trace's end (END is written next), like those of
  // a program's threads after it has exited: not lost, not recorded.
}

bool wait_until_given_back(thread_state* t) {
  while (t->taken.load(std::memory_order_acquire)) {
    mark_inactive(t);
    while (t->taken.load(std::memory_order_acquire)) sched_yield();
    t->active.store(true, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  return !closing.load(std::memory_order_relaxed);
}

void write_idle_blocks() {
  if (closing.load(std::memory_order_relaxed) || !tracing.load(std::memory_order_relaxed)) return;
  // Not waited for: an exit closing the threads holds the list while it waits for the writer.
  if (pthread_mutex_trylock(&live_mutex) != 0) return;
  // Again with the list held: close_other_threads sets `closing` before it takes the list, and
  // the exiting thread then writes its own block without marking itself inside an event.
  if (closing.load(std::memory_order_relaxed)) {
    pthread_mutex_unlock(&live_mutex);
    return;
  }
  constexpr std::size_t most = 64;  // a round; the others at the next
  thread_state* held[most];
  std::size_t n = 0;
  const std::uint64_t now = stamp_now();
  // A first look without holding them (the fields may be changing): threads with events in
  // their block and none for a while.
  const auto idle = [now](thread_state* t) {
    const std::uint64_t last = __atomic_load_n(&t->clock, __ATOMIC_RELAXED);
    // (Not a state that still keeps its blocks by ordinal, which only its own next block ends
    // (flush, stop_keeping): the threads of pthread_create never do.)
    return (__atomic_load_n(&t->block_events, __ATOMIC_RELAXED) != 0 ||
            __atomic_load_n(&t->pending_count, __ATOMIC_RELAXED) != 0) &&
           !__atomic_load_n(&t->keeps, __ATOMIC_RELAXED) && now > last && now - last >= idle_ticks;
  };
  for (thread_state* t = live_head; t != nullptr && n < most; t = t->next_live) {
    if (!idle(t)) continue;
    t->taken.store(true, std::memory_order_relaxed);
    held[n++] = t;
  }
  if (n != 0) {
    // Either a thread sees `taken` as it begins its next event, and waits, or its mark is seen
    // here (as for `closing`, close_other_threads).
    process_barrier();
    for (std::size_t i = 0; i < n; ++i) {
      thread_state* t = held[i];
      if (!t->active.load(std::memory_order_acquire) && idle(t)) write_idle_block(t);
      t->taken.store(false, std::memory_order_release);
    }
  }
  pthread_mutex_unlock(&live_mutex);
}

void reopen_other_threads() {
  closing.store(false, std::memory_order_relaxed);
  lost_events.fetch_add(events_after_close.exchange(0, std::memory_order_relaxed),
                        std::memory_order_relaxed);
}

std::size_t block_event_bytes(const thread_state* t) {
  const std::size_t pos = t->pos;
  const std::size_t pending = 3 * std::size_t{t->pending_count};
  if (pos == 0 || t->buffer[0] != fmt::tag_time) return pos + pending;
  std::size_t at = 1;
  for (int field = 0; field < 2; ++field)  // TIME's ticks and ns
    while (at < pos && (t->buffer[at++] & 0x80) != 0) {
    }
  return (pos > at ? pos - at : 0) + pending;
}

bool unwritten_threads(const thread_state* self, fmt::crash_thread* out, std::size_t cap,
                       std::size_t* listed, std::uint64_t deadline_ns) {
  *listed = 0;
  while (pthread_mutex_trylock(&live_mutex) != 0) {
    if (monotonic_ns() > deadline_ns) return false;
    sched_yield();
  }
  bool whole = true;
  for (const thread_state* t = live_head; t != nullptr; t = t->next_live) {
    if (t == self) continue;
    const std::size_t bytes = block_event_bytes(t);
    if (bytes == 0) continue;
    if (*listed == cap) {
      whole = false;
      break;
    }
    out[(*listed)++] = fmt::crash_thread{t->tid, t->alloc_ordinal, bytes};
  }
  pthread_mutex_unlock(&live_mutex);
  return whole;
}

// Lock order: module_mutex, live_mutex, then the sink's.
void live_fork_prepare() { pthread_mutex_lock(&live_mutex); }

void live_fork_parent() { pthread_mutex_unlock(&live_mutex); }

void live_fork_child() {
  pthread_mutex_init(&live_mutex, nullptr);
  // The parent's exit or exec in another thread may have closed its threads: not the child's.
  closing.store(false, std::memory_order_relaxed);
  events_after_close.store(0, std::memory_order_relaxed);
  // The parent's spare states, copied, are the parent's.
  for (std::size_t i = 0; i < spare_count; ++i) munmap(spare_states[i], thread_mapping_bytes());
  spare_count = 0;
  // The other threads do not exist in the child: their states (copies of the parent's) are left
  // alone, never written, and the child's exit closes only the states its own threads make.
  live_head = nullptr;
  if (tls_state != nullptr) {
    tls_state->next_live = tls_state->prev_live = nullptr;
    live_head = tls_state;
  }
}

void forget_stacks(thread_state* t) {
  unwind_cache_clear(t->cache);
  reset_stacks(t->stacks);  // (ids go on: the process table gives new ones to the new stacks)
}

}  // namespace lowalloc::trace
