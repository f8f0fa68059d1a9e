// A thread's table of stack ids, and the process's (stack_table.hpp).
#include "trace/stack_table.hpp"

#include "trace/os.hpp"
#include "trace/table_space.hpp"

#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <cstring>
#include <new>

namespace lowalloc::trace {

// Frames are stored in chunks that are never freed: the threads' tables and the process's name
// them without a lock, whichever thread stored them and whether it still runs. A single-threaded
// process stores its frames in its thread's chunks, without a lock; from its second thread, every
// thread stores them in the process's chunks, under the process table's lock (which it holds to
// add the stack there anyway). Only a process's one thread ever has chunks of its own.
struct frame_chunk {
  frame_chunk* next;  // (the process's: the chunks before)
  std::size_t used;   // in ips
  std::size_t capacity;
  std::uintptr_t ips[1];
};

namespace {

constexpr std::size_t chunk_bytes = 1u << 20;

// An entry of the process's index: with the clock when its stack's record was written, or
// not_defined_yet until then.
struct process_entry {
  std::uint32_t hash;  // the low 32 bits, as in stack_entry
  std::uint32_t id;
  const stack_frames* frames;
  std::uint64_t defined_at;

  std::size_t n() const noexcept { return frame_count(frames); }
  bool same(std::uint64_t stack_hash, const std::uintptr_t* ips, std::size_t count) const {
    return same_stack(hash, frames, stack_hash, ips, count);
  }
};

constexpr std::uint64_t not_defined_yet = ~std::uint64_t{0};

// The process's stacks, by frames, once it has more than one thread. A module unload or a fork
// empties the index (not the chunks) and starts a new epoch, whose threads publish their stacks
// again.
struct process_table {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  process_entry* entries = nullptr;
  std::size_t capacity = 0;
  std::size_t reserved = 0;  // bytes of address space at entries
  std::size_t size = 0;
  std::uint32_t epoch = 1;
  std::uint32_t generation = 0;  // module_generation of the stacks in the index
  frame_chunk* chunk = nullptr;
};

process_table g_process;
std::atomic<std::uint32_t> g_next_id{1};  // the process's next stack id

class process_lock {
 public:
  process_lock() { pthread_mutex_lock(&g_process.mutex); }
  ~process_lock() { pthread_mutex_unlock(&g_process.mutex); }
  process_lock(const process_lock&) = delete;
  process_lock& operator=(const process_lock&) = delete;
};

// The frames ips[0..n) in `chunk`'s chunks, the outermost `common` of them as those of `parent`
// when that saves some and its chain stays short, else all of them; nullptr when out of memory.
// (max_depth_limit frames are 2 KiB: a stack always fits a new chunk.)
const stack_frames* store_frames(frame_chunk*& chunk, const std::uintptr_t* ips, std::size_t n,
                                 const stack_frames* parent, std::size_t common) {
  constexpr std::size_t header = sizeof(stack_frames) / sizeof(std::uintptr_t);
  if (parent == nullptr || common <= header || parent->hops >= stack_frames::max_hops) {
    parent = nullptr;
    common = 0;
  }
  const std::size_t added = n - common;
  const std::size_t words = header + added;
  if (chunk == nullptr || chunk->capacity - chunk->used < words) {
    auto* fresh = static_cast<frame_chunk*>(map_memory(chunk_bytes));
    if (fresh == nullptr) return nullptr;
    fresh->capacity = (chunk_bytes - offsetof(frame_chunk, ips)) / sizeof(std::uintptr_t);
    fresh->next = chunk;
    chunk = fresh;
  }
  std::uintptr_t* stored = chunk->ips + chunk->used;
  chunk->used += words;
  auto* f = new (stored)
      stack_frames{parent, static_cast<std::uint16_t>(added), static_cast<std::uint16_t>(common),
                   parent == nullptr ? 1 : parent->hops + 1};
  std::memcpy(stored + header, ips, added * sizeof *ips);
  return f;
}

template <class Entry>
void place(Entry* entries, std::size_t capacity, const Entry& e) {
  std::size_t j = static_cast<std::size_t>(e.hash) & (capacity - 1);
  while (entries[j].id != 0) j = (j + 1) & (capacity - 1);
  entries[j] = e;
}

// Room for one more entry at 50% load; false when out of memory. `owned`: entries was mapped
// here (else it is a thread mapping's first table, or nothing), with `reserved` bytes of address
// space: it grows where it is while they hold it (table_space.hpp).
template <class Entry>
bool reserve_one(Entry*& entries, std::size_t& capacity, std::size_t& reserved, std::size_t size,
                 bool owned) {
  if ((size + 1) * 2 <= capacity) return true;
  const std::size_t grown = capacity == 0 ? first_table_capacity : capacity * 2;
  struct traits {
    static slot_state state(const Entry& e) {
      return e.id == 0 ? slot_state::empty : slot_state::live;
    }
    static std::size_t home(const Entry& e, std::size_t capacity) {
      return static_cast<std::size_t>(e.hash) & (capacity - 1);
    }
    static void clear(Entry& e) { e = Entry{}; }
  };
  if (owned && grow_in_place(entries, reserved, capacity * sizeof(Entry), grown * sizeof(Entry)) &&
      rebuild_in_place(entries, capacity, grown, traits{})) {
    capacity = grown;
    return true;
  }
  std::size_t space = 0;
  auto* to = static_cast<Entry*>(map_growable(grown * sizeof(Entry), &space));
  if (to == nullptr) return false;
  for (std::size_t k = 0; k < capacity; ++k)
    if (entries[k].id != 0) place(to, grown, entries[k]);
  if (owned) munmap(entries, reserved);
  entries = to;
  capacity = grown;
  reserved = space;
  return true;
}

// The slot of the entry with these frames, or of the empty one where it would go.
template <class Entry>
std::size_t slot_of(const Entry* entries, std::size_t capacity, std::uint64_t hash,
                    const std::uintptr_t* ips, std::size_t n) {
  const std::size_t mask = capacity - 1;
  std::size_t i = static_cast<std::size_t>(hash) & mask;
  for (; entries[i].id != 0; i = (i + 1) & mask) {
    if (entries[i].same(hash, ips, n)) break;
  }
  return i;
}

// The process's entry of stack `id`, or nullptr.
process_entry* entry_of(process_entry* entries, std::size_t capacity, std::uint64_t hash,
                        std::uint32_t id) {
  if (capacity == 0) return nullptr;
  const std::size_t mask = capacity - 1;
  for (std::size_t i = static_cast<std::size_t>(hash) & mask; entries[i].id != 0;
       i = (i + 1) & mask)
    if (entries[i].id == id) return &entries[i];
  return nullptr;
}

// The n frames of `f`, innermost first, into out[0..n).
void read_frames(const stack_frames* f, std::size_t n, std::uintptr_t* out) {
  std::size_t rest = n;
  for (;; f = f->parent) {
    if (rest <= f->shared) continue;
    const std::size_t own = rest - f->shared;
    std::memcpy(out, f->ips() + (f->added - own), own * sizeof *out);
    out += own;
    rest = f->shared;
    if (rest == 0) return;
  }
}

// Adds `e` to the process's index unless it has the stack already (under another id: two threads
// met it before either published it); false when out of memory. With the lock held.
bool put_process(const process_entry& e) {
  process_table& p = g_process;
  if (!reserve_one(p.entries, p.capacity, p.reserved, p.size, p.entries != nullptr)) return false;
  static std::uintptr_t ips[max_depth_limit];  // under the lock
  const std::size_t n = e.n();
  read_frames(e.frames, n, ips);
  const std::size_t slot = slot_of(p.entries, p.capacity, e.hash, ips, n);
  if (p.entries[slot].id != 0) return true;
  p.entries[slot] = e;
  ++p.size;
  return true;
}

// With the lock held: brings the index to the stacks of module generation `generation`, and
// puts the thread's stacks in it. False when the thread's stacks are older than the index's.
bool publish_locked(stack_table& s, std::uint32_t generation, std::uint64_t now) {
  process_table& p = g_process;
  if (generation != p.generation) {
    if (static_cast<std::int32_t>(generation - p.generation) < 0) return false;
    if (p.entries != nullptr) std::memset(p.entries, 0, p.capacity * sizeof(process_entry));
    p.size = 0;
    p.generation = generation;
    ++p.epoch;
  }
  if (s.published_epoch == p.epoch) return true;
  // Stacks the thread added while the process had one thread, their records written by now but
  // the one being written. (Out of memory, the stacks not put stay the thread's alone: others
  // define them again.)
  for (std::size_t i = 0; i < s.capacity; ++i) {
    const stack_entry& e = s.entries[i];
    if (e.id == 0) continue;
    const std::uint64_t at = e.id == s.pending_id ? not_defined_yet : now;
    if (!put_process(process_entry{e.hash, e.id, e.frames, at})) break;
  }
  s.published_epoch = p.epoch;
  return true;
}

}  // namespace

new_stack_id add_stack(stack_table& s, const std::uintptr_t* ips, std::size_t n, std::uint64_t hash,
                       std::size_t slot, std::uint32_t generation, std::uint64_t stamp,
                       std::uint64_t now, bool shared, const stack_frames* parent,
                       std::size_t common) {
  constexpr new_stack_id none{0, nullptr, false};
  if ((s.size + 1) * 2 > s.capacity) {
    if (!reserve_one(s.entries, s.capacity, s.reserved, s.size, s.capacity > first_table_capacity))
      return none;
    slot = slot_of(s.entries, s.capacity, hash, ips, n);
  }
  new_stack_id got{0, nullptr, true};
  if (!shared) {
    got.frames = store_frames(s.chunk, ips, n, parent, common);
    if (got.frames == nullptr) return none;
    got.id = g_next_id.fetch_add(1, std::memory_order_relaxed);
  } else {
    process_lock lock;
    process_table& p = g_process;
    // (A thread still on the stacks of before an unload, or out of memory: its stack is its own.)
    const bool can_put =
        publish_locked(s, generation, now) &&
        reserve_one(p.entries, p.capacity, p.reserved, p.size, p.entries != nullptr);
    std::size_t at = 0;
    const process_entry* known = nullptr;
    if (can_put) {
      at = slot_of(p.entries, p.capacity, hash, ips, n);
      known = &p.entries[at];
    }
    if (known != nullptr && known->id != 0) {
      got.id = known->id;
      got.frames = known->frames;
      got.define = known->defined_at >= stamp;
    } else {
      got.frames = store_frames(p.chunk, ips, n, parent, common);
      if (got.frames == nullptr) return none;
      got.id = g_next_id.fetch_add(1, std::memory_order_relaxed);
      if (can_put) {
        p.entries[at] =
            process_entry{static_cast<std::uint32_t>(hash), got.id, got.frames, not_defined_yet};
        ++p.size;
      }
    }
  }
  s.entries[slot] = stack_entry{static_cast<std::uint32_t>(hash), got.id, got.frames};
  ++s.size;
  if (got.define) s.pending_id = got.id;
  s.last_id = got.id;
  s.last_n = n;
  return got;
}

void stack_defined(stack_table& s, std::uint64_t hash, std::uint32_t id, std::uint64_t at) {
  s.pending_id = 0;
  if (s.published_epoch == 0) return;  // (not in the process's table: at its publishing)
  process_lock lock;
  process_table& p = g_process;
  if (s.published_epoch != p.epoch) return;
  process_entry* e = entry_of(p.entries, p.capacity, hash, id);
  if (e != nullptr && at < e->defined_at) e->defined_at = at;
}

void publish_stacks(stack_table& s, std::uint32_t generation, std::uint64_t now) {
  process_lock lock;
  publish_locked(s, generation, now);
}

void reset_stacks(stack_table& s) {
  std::memset(s.entries, 0, s.capacity * sizeof(stack_entry));
  s.size = 0;
  ++s.generation;
  s.last_id = 0;
  s.last_n = 0;
  s.written = nullptr;
  s.written_n = 0;
  s.published_epoch = 0;
  s.pending_id = 0;
}

void release_stacks(stack_table& s) {
  if (s.capacity > first_table_capacity) munmap(s.entries, s.reserved);
}

void process_stacks_fork_prepare() { pthread_mutex_lock(&g_process.mutex); }

void process_stacks_fork_parent() { pthread_mutex_unlock(&g_process.mutex); }

void process_stacks_fork_child() { pthread_mutex_init(&g_process.mutex, nullptr); }

void process_stacks_clear() {
  if (g_process.entries != nullptr)
    std::memset(g_process.entries, 0, g_process.capacity * sizeof(process_entry));
  g_process.size = 0;
  ++g_process.epoch;
  g_next_id.store(1, std::memory_order_relaxed);
}

}  // namespace lowalloc::trace
