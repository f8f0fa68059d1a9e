// Memory for the recorder's open-addressing tables that grow where they are: the kept table
// (kept.hpp) and the tables of stack ids (stack_table.hpp). A table moved to a new mapping at each
// growth had every page of it zeroed by the kernel, the old table's entries copied, and both in
// memory at once: `distinct_stacks 18`, a million distinct stacks, grew its table of stack ids
// (24-byte entries then, 16 now) from 48 KiB to 96 MiB, zeroing 192 MiB, and peaked at 202 MB
// traced (153 MB grown in place, 120 MB with entries of 16 bytes).
// Where the kernel's free pages were cold, the zeroing took a third of that traced run's CPU.
//
// A table mapped here has address space reserved for 4 times its size (at least 2 MiB), and its
// growths within it zero only the new slots; one that outgrows its space moves, to space for 4
// times its new size. From 48 KiB to 96 MiB: 110 MiB zeroed, where 96 is the least, and the last
// two growths in place. The space counts in the process's virtual size, and against a limit of
// the address space (RLIMIT_AS) that the program sets later: up to 4 times what its tables use
// (none is reserved when a limit is set already).
#ifndef LOWALLOC_SRC_TRACE_TABLE_SPACE_HPP
#define LOWALLOC_SRC_TRACE_TABLE_SPACE_HPP

#include "trace/os.hpp"

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

#pragma GCC visibility push(hidden)

namespace lowalloc::trace {

// A table's memory: `bytes` usable and zero at first, in `*reserved` bytes of address space at
// the same place (`bytes` alone when the space cannot be had: the address space is limited);
// nullptr when out of memory. Freed by munmap(p, *reserved).
inline void* map_growable(std::size_t bytes, std::size_t* reserved) {
  constexpr std::size_t factor = 4;
  std::size_t space = (bytes * factor + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
  void* p = reserve_table(space);
  if (p != nullptr && !commit_table(p, 0, bytes)) {
    munmap(p, space);
    p = nullptr;
  }
  if (p == nullptr) {
    space = bytes;
    p = map_table(bytes);
  }
  *reserved = space;
  return p;
}

// Makes [p + from, p + to) of a table mapped by map_growable usable, zero; false when it is past
// the reserved space or the memory cannot be had.
inline bool grow_in_place(void* p, std::size_t reserved, std::size_t from, std::size_t to) {
  return to <= reserved && (to == from || commit_table(p, from, to));
}

enum class slot_state { empty, removed, live };

// Rebuilds a linear-probing table where it is, from `old_capacity` slots to `capacity`
// (old_capacity times a power of two; the slots past old_capacity zero), without its removed
// entries. The table's `traits`: slot_state state(const Entry&), std::size_t home(const Entry&,
// std::size_t capacity), void clear(Entry&). False, the table untouched, when the memory for the
// entries held aside (below) cannot be had.
//
// Each entry is taken out and placed again, in slot order from the first empty slot s. A placed
// entry lands at or before the slot it was taken from, past the old slots, or in the slots before
// s, emptied first: its probe passes only entries placed already, never one still to be taken out,
// so that no placed entry's probe later finds a hole. The run in the slots before s may continue
// one from the old table's end: those entries are held aside and placed last, into a table without
// stale entries.
template <class Entry, class Traits>
bool rebuild_in_place(Entry* slots, std::size_t old_capacity, std::size_t capacity,
                      const Traits& traits) {
  constexpr std::size_t on_stack = 16;  // at most 512 bytes of the thread's stack
  Entry near[on_stack];
  std::size_t s = 0;
  while (traits.state(slots[s]) != slot_state::empty) ++s;  // the tables stay half empty
  Entry* aside = near;
  const std::size_t aside_bytes = s * sizeof(Entry);
  if (s > on_stack) {
    aside = static_cast<Entry*>(map_memory(aside_bytes));
    if (aside == nullptr) return false;
  }
  const auto place = [&](const Entry& e) {
    std::size_t i = traits.home(e, capacity);
    while (traits.state(slots[i]) != slot_state::empty) i = (i + 1) & (capacity - 1);
    slots[i] = e;
  };
  std::size_t held = 0;
  for (std::size_t i = 0; i < s; ++i) {
    if (traits.state(slots[i]) == slot_state::live) aside[held++] = slots[i];
    traits.clear(slots[i]);
  }
  for (std::size_t i = s + 1; i < old_capacity; ++i) {
    const slot_state state = traits.state(slots[i]);
    if (state == slot_state::empty) continue;
    const Entry e = slots[i];
    traits.clear(slots[i]);
    if (state == slot_state::live) place(e);
  }
  for (std::size_t i = 0; i < held; ++i) place(aside[i]);
  if (aside != near) munmap(aside, aside_bytes);
  return true;
}

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_TABLE_SPACE_HPP
