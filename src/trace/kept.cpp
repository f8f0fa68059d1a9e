// The table of kept allocations (kept.hpp).
#include "trace/kept.hpp"

#include "trace/os.hpp"

#include <sys/mman.h>

namespace lowalloc::trace {

namespace {

constexpr std::size_t first_capacity = 4096;  // 64 KiB

void place(kept_table& k, const kept_entry& e) {
  std::size_t i = kept_slot(k, e.addr);
  while (k.slots[i].addr != 0) i = (i + 1) & (k.capacity - 1);
  k.slots[i] = e;
}

}  // namespace

bool kept_take(kept_table& k, std::uintptr_t addr, std::uint64_t* ordinal) {
  if (k.count == 0) return false;
  const std::size_t mask = k.capacity - 1;
  std::size_t hole = kept_slot(k, addr);
  while (k.slots[hole].addr != addr) {
    if (k.slots[hole].addr == 0) return false;
    hole = (hole + 1) & mask;
  }
  *ordinal = k.slots[hole].ordinal;
  // Deletion by backward shift: no tombstones, so lookups stay short.
  for (std::size_t i = hole;;) {
    i = (i + 1) & mask;
    if (k.slots[i].addr == 0) break;
    const std::size_t home = kept_slot(k, k.slots[i].addr);
    const bool stays = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
    if (stays) continue;
    k.slots[hole] = k.slots[i];
    hole = i;
  }
  k.slots[hole].addr = 0;
  --k.count;
  return true;
}

bool kept_reserve(kept_table& k, std::size_t more) {
  std::size_t capacity = k.capacity == 0 ? first_capacity : k.capacity;
  while ((k.count + more) * 2 > capacity) capacity *= 2;
  if (capacity == k.capacity) return true;
  auto* slots = static_cast<kept_entry*>(map_memory(capacity * sizeof(kept_entry), true));
  if (slots == nullptr) return false;
  kept_table grown{slots, capacity, k.count};
  for (std::size_t i = 0; i < k.capacity; ++i)
    if (k.slots[i].addr != 0) place(grown, k.slots[i]);
  if (k.slots != nullptr) munmap(k.slots, k.capacity * sizeof(kept_entry));
  k = grown;
  return true;
}

bool kept_put(kept_table& k, std::uintptr_t addr, std::uint64_t ordinal, std::uint64_t* replaced) {
  std::size_t i = kept_slot(k, addr);
  while (k.slots[i].addr != 0 && k.slots[i].addr != addr) i = (i + 1) & (k.capacity - 1);
  const bool was_kept = k.slots[i].addr == addr;
  if (was_kept)
    *replaced = k.slots[i].ordinal;
  else
    ++k.count;
  k.slots[i] = kept_entry{addr, ordinal};
  return was_kept;
}

void kept_release(kept_table& k) {
  if (k.slots != nullptr) munmap(k.slots, k.capacity * sizeof(kept_entry));
  k = kept_table{nullptr, 0, 0};
}

}  // namespace lowalloc::trace
