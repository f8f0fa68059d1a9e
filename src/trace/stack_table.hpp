// Stack ids: each distinct call stack gets a small id, defined once per process by a STACK record,
// so that an ALLOC names its stack in a byte or two. Each thread looks its stacks up in a table of
// its own, without a lock; once the process has several threads, those it has not used yet in the
// process's table too, under one. Both are open-addressing tables over the return addresses, kept
// in chunks of mmap'd memory. The thread's lookup is inline: every allocation makes one; adding a
// stack is rare and out of line.
#ifndef LOWALLOC_SRC_TRACE_STACK_TABLE_HPP
#define LOWALLOC_SRC_TRACE_STACK_TABLE_HPP

#include "trace/config.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

#pragma GCC visibility push(hidden)

namespace lowalloc::trace {

// The frames of a stored stack, innermost first: the `added` ones that follow this header, then
// the outermost `shared` of `parent`'s (none when parent is nullptr). A new stack mostly shares
// its outer frames with the one stored before it, as its STACK_SHARED record does, and stores
// only the others: a clang++ compile's 156,000 stacks of 59 frames on average shared all but 12.
// A chain of them is read through at most max_hops records. Stored in a chunk (stack_table.cpp)
// and never moved or freed: the threads' tables and the process's name them without a lock.
struct stack_frames {
  const stack_frames* parent;
  std::uint16_t added;
  std::uint16_t shared;
  std::uint32_t hops;  // records a reading of all the frames may visit, this one included

  static constexpr std::uint32_t max_hops = 8;
  const std::uintptr_t* ips() const noexcept {
    return reinterpret_cast<const std::uintptr_t*>(this + 1);
  }
};

static_assert(sizeof(stack_frames) == 2 * sizeof(std::uintptr_t), "a header of two words");
static_assert(max_depth_limit < 65536, "frame counts fit 16 bits");

// How many frames `f` has: its own and those it shares.
inline std::size_t frame_count(const stack_frames* f) noexcept {
  return std::size_t{f->added} + f->shared;
}

// Whether ips[0..n) are the frames of `f`, whose count is n.
inline bool same_frames(const stack_frames* f, const std::uintptr_t* ips, std::size_t n) {
  std::size_t rest = n;  // the frames left to compare: the outermost `rest` of f's
  for (;; f = f->parent) {
    if (rest <= f->shared) continue;  // all of them in the parent's
    const std::size_t own = rest - f->shared;
    if (std::memcmp(ips, f->ips() + (f->added - own), own * sizeof *ips) != 0) return false;
    ips += own;
    rest = f->shared;
    if (rest == 0) return true;
  }
}

// How many outermost frames a[0..na) and b[0..nb) (innermost first) have in common. Every new
// stack is compared with the one defined before it, and a compiler's share most of theirs (47 of
// 59 on average): four frames a step, without a branch on each, then one at a time. (Frame by
// frame, the compare took 125 of the 2,012 instructions the recorder added to each allocation of
// `distinct_stacks 14`, every one a new stack; this way it adds 1,975.)
inline std::size_t common_outer_frames(const std::uintptr_t* a, std::size_t na,
                                       const std::uintptr_t* b, std::size_t nb) {
  const std::size_t limit = na < nb ? na : nb;
  const std::uintptr_t* x = a + na;  // one past the outermost
  const std::uintptr_t* y = b + nb;
  std::size_t k = 0;
  for (; k + 4 <= limit; k += 4) {
    const std::uintptr_t differs =
        (x[-1] ^ y[-1]) | (x[-2] ^ y[-2]) | (x[-3] ^ y[-3]) | (x[-4] ^ y[-4]);
    if (differs != 0) break;
    x -= 4;
    y -= 4;
  }
  for (; k < limit && x[-1] == y[-1]; ++k) {
    --x;
    --y;
  }
  return k;
}

// Whether the stack ips[0..count) of hash `stack_hash` is the one stored with `frames`, the low
// 32 bits of whose hash are `hash`: the hashes first, then the frames.
inline bool same_stack(std::uint32_t hash, const stack_frames* frames, std::uint64_t stack_hash,
                       const std::uintptr_t* ips, std::size_t count) {
  return hash == static_cast<std::uint32_t>(stack_hash) && frame_count(frames) == count &&
         same_frames(frames, ips, count);
}

// An entry in 16 bytes: the low 32 bits of the stack's hash (its home slot, and a first check
// before the frames are compared), its id (0: an empty slot) and its frames, which hold their
// count. With 24-byte entries (the whole hash and the count), `distinct_stacks 18`'s million
// stacks took a table of 96 MiB, its first probes missing the cache at every new stack.
struct stack_entry {
  std::uint32_t hash;
  std::uint32_t id;
  const stack_frames* frames;

  std::size_t n() const noexcept { return frame_count(frames); }
  bool same(std::uint64_t stack_hash, const std::uintptr_t* ips, std::size_t count) const {
    return same_stack(hash, frames, stack_hash, ips, count);
  }
};

static_assert(sizeof(stack_entry) == 16, "four entries a cache line");

struct frame_chunk;

// The first table lives in the thread's own mapping (thread_state.cpp); only larger ones are
// mapped and unmapped here.
inline constexpr std::size_t first_table_capacity = 1024;

// A thread's stacks: the ids of those it has used, without a lock.
struct stack_table {
  stack_entry* entries;
  std::size_t capacity;  // power of two
  std::size_t reserved;  // bytes of address space at entries, once mapped by stack_table.cpp
  std::size_t size;
  std::uint32_t generation;  // how many times the table forgot its stacks
  // The id the table gave last, and its stack's length: the unwinder says when a stack is the
  // previous one again.
  std::uint32_t last_id;
  std::size_t last_n;
  // The stream's latest STACK record: a new stack mostly shares its outer frames with it, and
  // its record then lists only the others, as its stored frames do.
  const stack_frames* written;
  std::size_t written_n;
  frame_chunk* chunk;             // where the frames of its next new stack go
  std::uint32_t published_epoch;  // the process table's epoch that has its stacks; 0: none
  std::uint32_t pending_id;       // a stack whose record the thread is writing; 0: none
  // The frames of `written`, whole: a new stack is compared with them from its outermost frame.
  std::uintptr_t written_ips[max_depth_limit];
};

// The id of the stack ips[0..n) (n > 0), whose hash (unwind.hpp's stack_hash) is `hash`, or 0 if
// the table does not have it; then `slot` is where add_stack puts it.
inline std::uint32_t find_stack(stack_table& s, const std::uintptr_t* ips, std::size_t n,
                                std::uint64_t hash, std::size_t& slot) {
  std::size_t mask = s.capacity - 1;
  std::size_t i = static_cast<std::size_t>(hash) & mask;
  for (;; i = (i + 1) & mask) {
    const stack_entry& e = s.entries[i];
    if (e.id == 0) break;
    if (e.same(hash, ips, n)) {
      s.last_id = e.id;
      s.last_n = n;
      return e.id;
    }
  }
  slot = i;
  return 0;
}

// A stack new to the thread: its id, and whether the thread must define it.
struct new_stack_id {
  std::uint32_t id;            // 0: out of memory
  const stack_frames* frames;  // kept for the life of the process
  bool define;                 // the caller writes its STACK record, then calls stack_defined
};

// Stack ids are the process's (format version 6): a stack is defined by a STACK record in the
// stream of the thread that used it first, and the other threads' events name it by the same id.
// While the process has one thread, its table is the only one: a new stack takes the next id and
// is defined. Once it has more (`shared`), each thread puts its stacks in the process's table
// (publish_stacks) and looks there for those new to it, under a lock. The reader merges the
// streams in time order, so a thread may use another's id without a record of its own only once
// that record is surely before its event: its event's stamp is later than the clock when the
// record was written. Else (the two threads met the stack at the same moment) it writes a record
// too, with the same id and frames. An id is never given twice in a process's file: after a
// module unload the tables forget their stacks and the ids go on.
//
// Adds ips[0..n) (n > 0, of hash `hash`, not in the table: `slot` from find_stack) to the
// thread's table, for an event stamped `stamp` by a thread whose stacks are of module generation
// `generation` and whose stream's clock is `now`. Its outermost `common` frames are those of
// `parent` (nullptr: none), which it may then not store again.
new_stack_id add_stack(stack_table& s, const std::uintptr_t* ips, std::size_t n, std::uint64_t hash,
                       std::size_t slot, std::uint32_t generation, std::uint64_t stamp,
                       std::uint64_t now, bool shared, const stack_frames* parent,
                       std::size_t common);

// The thread wrote the STACK record of stack `id` (add_stack said to define it), at clock `at`.
void stack_defined(stack_table& s, std::uint64_t hash, std::uint32_t id, std::uint64_t at);

// Puts the thread's stacks in the process's table, if they are not there (the process has
// another thread now), their records written by the stream's clock `now`.
void publish_stacks(stack_table& s, std::uint32_t generation, std::uint64_t now);

// Forgets every stack; keeps the memory.
void reset_stacks(stack_table& s);

// Unmaps what the table mapped beyond the thread's own mapping (not its frames: the process's
// table may name them).
void release_stacks(stack_table& s);

// Around fork: the process's table stays usable in the child, and a traced child clears it before
// its first event, its file defining its stacks again from id 1.
void process_stacks_fork_prepare();
void process_stacks_fork_parent();
void process_stacks_fork_child();
void process_stacks_clear();

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_STACK_TABLE_HPP
