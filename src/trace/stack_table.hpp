// Stack ids: each distinct call stack gets a small id, defined once per process by a STACK record,
// so that an ALLOC names its stack in a byte or two. Each thread looks its stacks up in a table of
// its own, without a lock; once the process has several threads, those it has not used yet in the
// process's table too, under one. Both are open-addressing tables over the return addresses, kept
// in chunks of mmap'd memory. The thread's lookup is inline: every allocation makes one; adding a
// stack is rare and out of line.
#ifndef LOWALLOC_SRC_TRACE_STACK_TABLE_HPP
#define LOWALLOC_SRC_TRACE_STACK_TABLE_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>

#pragma GCC visibility push(hidden)

namespace lowalloc::trace {

struct stack_entry {
  std::uint64_t hash;
  std::uint32_t id;
  std::uint32_t n;
  const std::uintptr_t* ips;  // in a chunk of frames: never moved or freed
};

struct frame_chunk;

// The first table lives in the thread's own mapping (thread_state.cpp); only larger ones are
// mapped and unmapped here.
inline constexpr std::size_t first_table_capacity = 1024;

// A thread's stacks: the ids of those it has used, without a lock.
struct stack_table {
  stack_entry* entries;
  std::size_t capacity;  // power of two
  std::size_t size;
  std::uint32_t generation;  // how many times the table forgot its stacks
  // The id the table gave last, and its stack's length: the unwinder says when a stack is the
  // previous one again.
  std::uint32_t last_id;
  std::size_t last_n;
  // The frames of the stream's latest STACK record: a new stack mostly shares its outer frames
  // with it, and its record then lists only the others.
  const std::uintptr_t* written_ips;
  std::size_t written_n;
  frame_chunk* chunk;             // where the frames of its next new stack go
  std::uint32_t published_epoch;  // the process table's epoch that has its stacks; 0: none
  std::uint32_t pending_id;       // a stack whose record the thread is writing; 0: none
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
    if (e.hash == hash && e.n == n && std::memcmp(e.ips, ips, n * sizeof *ips) == 0) {
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
  std::uint32_t id;           // 0: out of memory
  const std::uintptr_t* ips;  // its frames, kept for the life of the process
  bool define;                // the caller writes its STACK record, then calls stack_defined
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
// `generation` and whose stream's clock is `now`.
new_stack_id add_stack(stack_table& s, const std::uintptr_t* ips, std::size_t n, std::uint64_t hash,
                       std::size_t slot, std::uint32_t generation, std::uint64_t stamp,
                       std::uint64_t now, bool shared);

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
