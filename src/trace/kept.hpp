// The allocations of a one-thread process that outlive their block, by address. While the
// process has one thread, no other thread can free its blocks: the recorder keeps the address of
// each allocation that its block did not free here instead of writing it (ADDRESSES), and a later
// free names the allocation by its stream ordinal (FREE_KEPT) instead of its address. Neither
// address reaches the trace: a program that keeps many blocks writes what a program of
// short-lived blocks writes. Once a second thread starts, the table is written out (LIVE) and the
// thread goes back to addresses (thread_state.hpp, keeps).
#ifndef LOWALLOC_SRC_TRACE_KEPT_HPP
#define LOWALLOC_SRC_TRACE_KEPT_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>

#pragma GCC visibility push(hidden)

namespace lowalloc::trace {

// An entry in 12 bytes: the address divided by 8 and the ordinal, 48 bits each. The table holds
// an entry for every block the program keeps alive, in the traced process's own memory: 24 to 64
// bytes a live block at its loads, 32 to 85 with 16-byte entries (python3 building a dict of
// 300,000 strings: 97.9 MiB of peak memory traced, 111.0 MiB before, 66.2 MiB untraced). An
// address or an ordinal that does not fit (kept_fits) is not kept: its block writes ADDRESSES.
struct kept_entry {
  std::uint32_t word[3];

  /// The address divided by 8, the table's key: 0 an empty slot, kept_removed a taken one.
  std::uint64_t key() const noexcept {
    std::uint64_t v;
    std::memcpy(&v, word, sizeof v);
    return v & key_mask;
  }
  std::uintptr_t addr() const noexcept { return static_cast<std::uintptr_t>(key() << 3); }
  std::uint64_t ordinal() const noexcept { return word[1] >> 16 | std::uint64_t{word[2]} << 16; }
  void set(std::uint64_t key, std::uint64_t ordinal) noexcept {
    word[0] = static_cast<std::uint32_t>(key);
    word[1] = static_cast<std::uint32_t>(key >> 32 | (ordinal & 0xffff) << 16);
    word[2] = static_cast<std::uint32_t>(ordinal >> 16);
  }
  void set_key(std::uint64_t key) noexcept { set(key, ordinal()); }

  static constexpr std::uint64_t key_mask = (std::uint64_t{1} << 48) - 1;
};

static_assert(sizeof(kept_entry) == 12, "three words an entry");

// The key of a taken entry, where a lookup must go on: no block starts at address 8.
inline constexpr std::uint64_t kept_removed = 1;

/// Whether allocations at addresses whose bits are all in `addresses` (the OR of them), up to
/// stream ordinal `ordinal_end` (excluded), fit in entries: addresses below 2^51 and multiples of
/// 8 (what malloc returns), ordinals below 2^48.
inline bool kept_fits(std::uintptr_t addresses, std::uint64_t ordinal_end) noexcept {
  return (addresses & 7) == 0 && std::uint64_t{addresses} >> 51 == 0 &&
         ordinal_end <= kept_entry::key_mask + 1;
}

// Linear probing in anonymous memory (the recorder must not call malloc). Entries and removed
// ones fill at most half the slots; a table rebuilt holds at most 3/8. A take leaves a
// removed entry unless it ends its run: deletion by backward shift walked to the end of the run,
// and the windows below make runs longer than hashing each slot would (with a window a page,
// python3 building a dict: 26 slots read and 146 instructions a take, more than the rest of the
// free's recording). A removed entry always has a live one after it in its run: a take at the
// end of a run empties the removed entries before it too. kept_reserve rebuilds the table when
// removed entries fill it.
//
// The table grows and is rebuilt where it is (table_space.hpp): moved at each growth, python3
// building a dict of a million strings spent up to 9% of its traced run in the kernel's zeroing
// of 96 MiB of new tables, where its last one is 48 MiB.
struct kept_table {
  kept_entry* slots;  // nullptr until the first block keeps something
  std::size_t capacity;
  std::size_t count;
  std::size_t removed;   // slots holding kept_removed
  std::size_t reserved;  // bytes of address space at slots, a multiple of the page size
};

// The blocks of 1 KiB of address share a window of 64 slots, a slot per 16 bytes, in address
// order; windows are spread by a hash. A program frees its blocks much in the order of their
// addresses (a container's elements, one after the other), and those frees then find their
// entries in lines already in the cache: fully hashed slots made each free of a kept block a
// cache miss.
//
// A window is full when two stretches of address share it and their blocks are 32 bytes apart
// (the smallest block glibc's malloc gives): its run then flows into the next window, and runs
// join. With a window for each 4 KiB page (256 slots) runs grew to hundreds of slots: a Rust
// program keeping 400,000 small blocks in a HashMap read 43 slots a put and 43 a take (kept_take
// 15% and write_addresses 10% of its traced run's samples), cc1plus 10 a put. Smaller windows keep
// what flows over small, and lose some of the locality of frees: python3 freeing a dict of 1 M
// strings spent 1.7 times as much in the table with windows of 1 KiB, 2.5 times with 512 bytes;
// the Rust program 0.42 times, a C++ std::list of 2 M ints 0.75 times (docs/benchmarks.md,
// "2026-12-07, later").
inline constexpr unsigned kept_window_address_bits = 10;  // 1 KiB of address a window
inline constexpr unsigned kept_window_bits = 6;           // 64 slots, one per 16 bytes
inline constexpr std::size_t kept_window_slots = std::size_t{1} << kept_window_bits;
static_assert(kept_window_address_bits - kept_window_bits == 4, "a slot per 16 bytes of address");

inline std::size_t kept_slot(const kept_table& k, std::uintptr_t addr) {
  const std::uint64_t window = (addr >> kept_window_address_bits) * 0x9E3779B97F4A7C15u >> 24;
  return static_cast<std::size_t>(window << kept_window_bits |
                                  ((addr >> 4) & (kept_window_slots - 1))) &
         (k.capacity - 1);
}

// Starts fetching the line of `addr`'s slot (slots allocated): the table is much larger than the
// caches, and each lookup's first load is a miss. Always inline: GCC counts no effect of a
// prefetch, and removed the calls of this function, left out of line, as calls of a pure one.
__attribute__((always_inline)) inline void kept_prefetch(const kept_table& k, std::uintptr_t addr) {
  __builtin_prefetch(&k.slots[kept_slot(k, addr)], 1);
}

// Removes the entry of `addr` if there is one, and gives its ordinal.
bool kept_take(kept_table& k, std::uintptr_t addr, std::uint64_t* ordinal);

// Room for `more` entries without growing; false when the memory for it cannot be had. Grows
// the table, or rebuilds it without its removed entries, when they would fill half of it: in
// place while its reserved space holds it, else in a new mapping.
bool kept_reserve(kept_table& k, std::size_t more);

// Adds `addr` (room reserved; the address and ordinal fit: kept_fits). If it was kept already,
// the allocation it named was freed without the recorder seeing it: returns true with that one's
// ordinal in `*replaced`.
bool kept_put(kept_table& k, std::uintptr_t addr, std::uint64_t ordinal, std::uint64_t* replaced);

// Calls f(entry) for each entry.
template <class F>
void kept_for_each(const kept_table& k, F&& f) {
  for (std::size_t i = 0; i < k.capacity; ++i)
    if (k.slots[i].key() > kept_removed) f(k.slots[i]);
}

// Unmaps the table and leaves it empty.
void kept_release(kept_table& k);

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_KEPT_HPP
