// A thread's stack ids: each distinct call stack gets a small id, defined once per stream by a
// STACK record, so that an ALLOC names its stack in a byte or two. An open-addressing table over
// the return addresses, stored in chunks of mmap'd memory. The lookup is inline: every
// allocation makes one; adding a stack is rare and out of line.
#ifndef LOWALLOC_SRC_TRACE_STACK_TABLE_HPP
#define LOWALLOC_SRC_TRACE_STACK_TABLE_HPP

#include "trace/config.hpp"

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
  ip_chunk* chunks;
  // The previous allocation's stack: consecutive allocations often share it.
  std::uint32_t last_id;
  std::size_t last_n;
  std::uintptr_t last_ips[max_depth_limit];
};

inline void remember_last(stack_table& s, std::uint32_t id, const std::uintptr_t* ips,
                          std::size_t n) {
  s.last_id = id;
  s.last_n = n;
  std::memcpy(s.last_ips, ips, n * sizeof *ips);
}

// The id of the stack ips[0..n) (n > 0), or 0 if the table does not have it; then `hash` and
// `slot` are where add_stack puts it.
inline std::uint32_t find_stack(stack_table& s, const std::uintptr_t* ips, std::size_t n,
                                std::uint64_t& hash, std::size_t& slot) {
  if (n == s.last_n && std::memcmp(ips, s.last_ips, n * sizeof *ips) == 0) return s.last_id;

  std::uint64_t h = 0x9E3779B97F4A7C15u ^ n;
  for (std::size_t i = 0; i < n; ++i) {
    h = (h ^ ips[i]) * 0xff51afd7ed558ccdu;
    h ^= h >> 32;
  }
  std::size_t mask = s.capacity - 1;
  std::size_t i = static_cast<std::size_t>(h) & mask;
  for (;; i = (i + 1) & mask) {
    const stack_entry& e = s.entries[i];
    if (e.id == 0) break;
    if (e.hash == h && e.n == n && std::memcmp(e.ips, ips, n * sizeof *ips) == 0) {
      remember_last(s, e.id, ips, n);
      return e.id;
    }
  }
  hash = h;
  slot = i;
  return 0;
}

// Stores a stack find_stack did not find and returns its new id; 0 when out of memory.
std::uint32_t add_stack(stack_table& s, const std::uintptr_t* ips, std::size_t n,
                        std::uint64_t hash, std::size_t slot);

// Forgets every stack (ids start at 1 again); keeps the memory.
void reset_stacks(stack_table& s);

// Unmaps what the table mapped beyond the thread's own mapping.
void release_stacks(stack_table& s);

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_STACK_TABLE_HPP
