// Adding, forgetting and releasing the stacks of a thread's table (stack_table.hpp).
#include "trace/stack_table.hpp"

#include "trace/os.hpp"

#include <sys/mman.h>

namespace lowalloc::trace {

namespace {

constexpr std::size_t chunk_bytes = 1u << 20;

}  // namespace

std::uint32_t add_stack(stack_table& s, const std::uintptr_t* ips, std::size_t n,
                        std::uint64_t hash, std::size_t slot) {
  // Grow the table at 50% load.
  if ((s.size + 1) * 2 > s.capacity) {
    std::size_t capacity = s.capacity * 2;
    auto* entries = static_cast<stack_entry*>(map_memory(capacity * sizeof(stack_entry), true));
    if (entries == nullptr) return 0;
    for (std::size_t k = 0; k < s.capacity; ++k) {
      const stack_entry& e = s.entries[k];
      if (e.id == 0) continue;
      std::size_t j = static_cast<std::size_t>(e.hash) & (capacity - 1);
      while (entries[j].id != 0) j = (j + 1) & (capacity - 1);
      entries[j] = e;
    }
    if (s.capacity > first_table_capacity) munmap(s.entries, s.capacity * sizeof(stack_entry));
    s.entries = entries;
    s.capacity = capacity;
    std::size_t mask = capacity - 1;
    slot = static_cast<std::size_t>(hash) & mask;
    while (s.entries[slot].id != 0) slot = (slot + 1) & mask;
  }
  ip_chunk* chunk = s.chunks;
  while (chunk != nullptr && chunk->capacity - chunk->used < n) chunk = chunk->next;
  if (chunk == nullptr) {
    chunk = static_cast<ip_chunk*>(map_memory(chunk_bytes));
    if (chunk == nullptr) return 0;
    chunk->capacity = (chunk_bytes - offsetof(ip_chunk, ips)) / sizeof(std::uintptr_t);
    chunk->next = s.chunks;
    s.chunks = chunk;
  }
  std::uintptr_t* stored = chunk->ips + chunk->used;
  chunk->used += n;
  std::memcpy(stored, ips, n * sizeof *ips);
  std::uint32_t id = s.next_id++;
  s.entries[slot] = stack_entry{hash, id, static_cast<std::uint32_t>(n), stored};
  ++s.size;
  s.last_id = id;
  s.last_n = n;
  s.added_ips = stored;
  return id;
}

void reset_stacks(stack_table& s) {
  std::memset(s.entries, 0, s.capacity * sizeof(stack_entry));
  s.size = 0;
  s.next_id = 1;
  ++s.generation;
  for (ip_chunk* c = s.chunks; c != nullptr; c = c->next) c->used = 0;
  s.last_id = 0;
  s.last_n = 0;
  s.written_n = 0;
}

void release_stacks(stack_table& s) {
  for (ip_chunk* c = s.chunks; c != nullptr;) {
    ip_chunk* next = c->next;
    munmap(c, chunk_bytes);
    c = next;
  }
  if (s.capacity > first_table_capacity) munmap(s.entries, s.capacity * sizeof(stack_entry));
}

}  // namespace lowalloc::trace
