// A thread's stack ids: each distinct call stack gets a small id, defined once per stream by a
// STACK record, so that an ALLOC names its stack in a byte or two. An open-addressing table over
// the return addresses, stored in chunks of mmap'd memory. The lookup is inline: every
// allocation makes one; adding a stack is rare and out of line.
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
  const std::uintptr_t* ips;
};

struct ip_chunk {
  ip_chunk* next;
  std::size_t used;  // in ips
  std::size_t capacity;
  std::uintptr_t ips[1];
};

// The first table lives in the thread's own mapping (thread_state.cpp); only larger ones are
// mapped and unmapped here.
inline constexpr std::size_t first_table_capacity = 1024;

struct stack_table {
  stack_entry* entries;
  std::size_t capacity;  // power of two
  std::size_t size;
  std::uint32_t next_id;
  std::uint32_t generation;  // how many times the table forgot its stacks
  ip_chunk* chunks;
  // The id the table gave last, and its stack's length: the unwinder says when a stack is the
  // previous one again.
  std::uint32_t last_id;
  std::size_t last_n;
  // The frames stored by the latest add_stack, and those of the stream's latest STACK record: a
  // new stack mostly shares its outer frames with it, and its record then lists only the others.
  const std::uintptr_t* added_ips;
  const std::uintptr_t* written_ips;
  std::size_t written_n;
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

// Stores a stack find_stack did not find and returns its new id; 0 (and no last id) when out of
// memory.
std::uint32_t add_stack(stack_table& s, const std::uintptr_t* ips, std::size_t n,
                        std::uint64_t hash, std::size_t slot);

// Forgets every stack (ids start at 1 again); keeps the memory.
void reset_stacks(stack_table& s);

// Unmaps what the table mapped beyond the thread's own mapping.
void release_stacks(stack_table& s);

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_STACK_TABLE_HPP
