// The table of kept allocations (kept.hpp).
#include "trace/kept.hpp"

#include "trace/os.hpp"
#include "trace/table_space.hpp"

#include <sys/mman.h>

namespace lowalloc::trace {

namespace {

constexpr std::size_t first_capacity = 4096;  // 48 KiB

void place(kept_table& k, const kept_entry& e) {
  std::size_t i = kept_slot(k, e.addr());
  while (k.slots[i].key() != 0) i = (i + 1) & (k.capacity - 1);
  k.slots[i] = e;
}

struct kept_traits {
  static slot_state state(const kept_entry& e) {
    const std::uint64_t key = e.key();
    return key == 0              ? slot_state::empty
           : key == kept_removed ? slot_state::removed
                                 : slot_state::live;
  }
  static std::size_t home(const kept_entry& e, std::size_t capacity) {
    return kept_slot(kept_table{nullptr, capacity, 0, 0, 0}, e.addr());
  }
  static void clear(kept_entry& e) { e.set(0, 0); }
};

}  // namespace

bool kept_take(kept_table& k, std::uintptr_t addr, std::uint64_t* ordinal) {
  if (k.count == 0) return false;
  const std::size_t mask = k.capacity - 1;
  const std::uint64_t key = addr >> 3;
  std::size_t i = kept_slot(k, addr);
  for (;;) {
    const std::uint64_t at = k.slots[i].key();
    if (at == key) break;
    if (at == 0) return false;
    i = (i + 1) & mask;
  }
  *ordinal = k.slots[i].ordinal();
  --k.count;
  if (k.slots[(i + 1) & mask].key() != 0) {
    k.slots[i].set_key(kept_removed);
    ++k.removed;
    return true;
  }
  // The end of its run: no lookup goes through this slot, nor through the removed ones before it.
  k.slots[i].set(0, 0);
  for (std::size_t j = (i - 1) & mask; k.slots[j].key() == kept_removed; j = (j - 1) & mask) {
    k.slots[j].set(0, 0);
    --k.removed;
  }
  return true;
}

bool kept_reserve(kept_table& k, std::size_t more) {
  if (k.capacity != 0 && (k.count + k.removed + more) * 2 <= k.capacity) return true;
  // Rebuilt, entries at most 3/8 of the slots: another rebuild takes an eighth of them in takes
  // and puts first, so a table near half full is not rebuilt at every block. (Grown at 5/8 full
  // and rebuilt to half, the table took 82.5 MiB of peak memory from python3 building a dict
  // instead of 100.2, but its puts read 4 to 12 slots and the recorder added 5% more
  // instructions to cc1plus.)
  std::size_t capacity = k.capacity == 0 ? first_capacity : k.capacity;
  while ((k.count + more) * 8 > capacity * 3) capacity *= 2;
  const std::size_t bytes = capacity * sizeof(kept_entry);
  if (k.slots != nullptr &&
      grow_in_place(k.slots, k.reserved, k.capacity * sizeof(kept_entry), bytes) &&
      rebuild_in_place(k.slots, k.capacity, capacity, kept_traits{})) {
    k.capacity = capacity;
    k.removed = 0;
    return true;
  }
  std::size_t reserved = 0;
  auto* slots = static_cast<kept_entry*>(map_growable(bytes, &reserved));
  if (slots == nullptr) return false;
  kept_table rebuilt{slots, capacity, k.count, 0, reserved};
  for (std::size_t i = 0; i < k.capacity; ++i)
    if (k.slots[i].key() > kept_removed) place(rebuilt, k.slots[i]);
  if (k.slots != nullptr) munmap(k.slots, k.reserved);
  k = rebuilt;
  return true;
}

bool kept_put(kept_table& k, std::uintptr_t addr, std::uint64_t ordinal, std::uint64_t* replaced) {
  const std::size_t mask = k.capacity - 1;
  const std::uint64_t key = addr >> 3;
  std::size_t i = kept_slot(k, addr);
  std::size_t reuse = k.capacity;  // the first removed slot on the way, if any
  for (;; i = (i + 1) & mask) {
    const std::uint64_t at = k.slots[i].key();
    if (at == key) {
      *replaced = k.slots[i].ordinal();
      k.slots[i].set(key, ordinal);
      return true;
    }
    if (at == 0) break;
    if (at == kept_removed && reuse == k.capacity) reuse = i;
  }
  if (reuse != k.capacity) {
    i = reuse;
    --k.removed;
  }
  ++k.count;
  k.slots[i].set(key, ordinal);
  return false;
}

void kept_release(kept_table& k) {
  if (k.slots != nullptr) munmap(k.slots, k.reserved);
  k = kept_table{nullptr, 0, 0, 0, 0};
}

}  // namespace lowalloc::trace
