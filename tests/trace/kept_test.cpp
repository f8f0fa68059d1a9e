// The recorder's table of kept allocations (src/trace/kept.cpp, built into this test: the tracer
// module it belongs to cannot be linked into one), against a std::unordered_map.
#include "trace/kept.hpp"
#include "trace/os.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

namespace {

using lowalloc::trace::kept_entry;
using lowalloc::trace::kept_for_each;
using lowalloc::trace::kept_put;
using lowalloc::trace::kept_release;
using lowalloc::trace::kept_removed;
using lowalloc::trace::kept_reserve;
using lowalloc::trace::kept_table;
using lowalloc::trace::kept_take;

struct table {
  kept_table k{nullptr, 0, 0, 0, 0};
  ~table() { kept_release(k); }
};

// Slots whose key (an address divided by 8) is `key`.
std::size_t slots_holding(const kept_table& k, std::uint64_t key) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < k.capacity; ++i) n += k.slots[i].key() == key ? 1u : 0u;
  return n;
}

// The table's entries and counters against the map's: every entry found once, none more.
void expect_same(const kept_table& k, const std::unordered_map<std::uintptr_t, std::uint64_t>& m) {
  ASSERT_EQ(k.count, m.size());
  ASSERT_EQ(slots_holding(k, kept_removed), k.removed);
  ASSERT_LE((k.count + k.removed) * 2, k.capacity);
  std::size_t seen = 0;
  kept_for_each(k, [&](const kept_entry& e) {
    auto it = m.find(e.addr());
    ASSERT_NE(it, m.end()) << e.addr();
    EXPECT_EQ(it->second, e.ordinal());
    ++seen;
  });
  EXPECT_EQ(seen, m.size());
  // Each found by a lookup: no empty slot between its home and its slot.
  for (const auto& entry : m) {
    const std::uintptr_t a = entry.first;
    std::size_t i = lowalloc::trace::kept_slot(k, a), steps = 0;
    while (k.slots[i].key() != a >> 3) {
      ASSERT_NE(k.slots[i].key(), 0u) << "an empty slot on the way to " << a;
      ASSERT_LT(++steps, k.capacity);
      i = (i + 1) & (k.capacity - 1);
    }
  }
}

// Takes a live block chosen at random, as the program frees it: the table gives its ordinal.
void take_one_at_random(kept_table& k, std::unordered_map<std::uintptr_t, std::uint64_t>& m,
                        std::vector<std::uintptr_t>& live, std::mt19937_64& rng) {
  const std::size_t j = rng() % live.size();
  std::uint64_t ordinal = 0;
  ASSERT_TRUE(kept_take(k, live[j], &ordinal));
  ASSERT_EQ(ordinal, m.at(live[j]));
  m.erase(live[j]);
  live[j] = live.back();
  live.pop_back();
}

// Takes every block of `m`: the table gives each one's ordinal, and ends empty.
void take_all(kept_table& k, const std::unordered_map<std::uintptr_t, std::uint64_t>& m) {
  for (const auto& [a, o] : m) {
    std::uint64_t ordinal = 0;
    ASSERT_TRUE(kept_take(k, a, &ordinal)) << a;
    ASSERT_EQ(ordinal, o);
  }
  EXPECT_EQ(k.count, 0u);
}

TEST(KeptTable, TakesWhatWasPutAndNothingElse) {
  table t;
  ASSERT_TRUE(kept_reserve(t.k, 3));
  std::uint64_t replaced = 0, ordinal = 0;
  EXPECT_FALSE(kept_put(t.k, 0x1000, 7, &replaced));
  EXPECT_FALSE(kept_put(t.k, 0x1010, 8, &replaced));
  EXPECT_FALSE(kept_take(t.k, 0x1020, &ordinal));  // never kept
  EXPECT_TRUE(kept_take(t.k, 0x1000, &ordinal));
  EXPECT_EQ(ordinal, 7u);
  EXPECT_FALSE(kept_take(t.k, 0x1000, &ordinal));  // taken already
  // Kept again at an address whose allocation was freed unseen: the older one is replaced.
  EXPECT_TRUE(kept_put(t.k, 0x1010, 9, &replaced));
  EXPECT_EQ(replaced, 8u);
  EXPECT_EQ(t.k.count, 1u);
  EXPECT_TRUE(kept_take(t.k, 0x1010, &ordinal));
  EXPECT_EQ(ordinal, 9u);
  EXPECT_EQ(t.k.count, 0u);
}

// The blocks of 1 KiB of address share a window of slots: 48-byte blocks of four such
// stretches that hash to one window make one long run. A take inside it leaves a removed entry that
// lookups go past; taking the run's last entry empties it and the removed ones before it.
TEST(KeptTable, RemovedEntriesInARunAndAtItsEnd) {
  using lowalloc::trace::kept_window_address_bits;
  using lowalloc::trace::kept_window_slots;
  table t;
  ASSERT_TRUE(kept_reserve(t.k, 1));
  const std::size_t windows = t.k.capacity / kept_window_slots;
  const std::uintptr_t window_bytes = std::uintptr_t{1} << kept_window_address_bits;
  // The stretch at 0x10000000 and three after it that share its window.
  std::vector<std::uintptr_t> stretches;
  const std::size_t window = lowalloc::trace::kept_slot(t.k, 0x10000000) / kept_window_slots;
  const std::uintptr_t first = 0x10000000 / window_bytes;
  for (std::uintptr_t n = first; stretches.size() < 4 && n < first + windows * 64; ++n)
    if (lowalloc::trace::kept_slot(t.k, n * window_bytes) / kept_window_slots == window)
      stretches.push_back(n * window_bytes);
  ASSERT_EQ(stretches.size(), 4u);
  std::vector<std::uintptr_t> run;
  for (std::uintptr_t start : stretches)
    for (std::uintptr_t a = start; a + 48 <= start + window_bytes; a += 48) run.push_back(a);
  ASSERT_GT(run.size(), kept_window_slots);  // past the window: one run with the next
  ASSERT_TRUE(kept_reserve(t.k, run.size()));
  std::unordered_map<std::uintptr_t, std::uint64_t> m;
  std::uint64_t replaced = 0, ordinal = 0;
  for (std::size_t i = 0; i < run.size(); ++i) {
    ASSERT_FALSE(kept_put(t.k, run[i], i, &replaced));
    m[run[i]] = i;
  }
  expect_same(t.k, m);
  // Every other block of the run, then all the others: lookups must find each through
  // the removed entries, and the table ends empty.
  for (std::size_t i = 0; i < run.size(); i += 2) {
    ASSERT_TRUE(kept_take(t.k, run[i], &ordinal));
    ASSERT_EQ(ordinal, i);
    m.erase(run[i]);
  }
  expect_same(t.k, m);
  EXPECT_GT(t.k.removed, 0u);
  for (std::size_t i = 1; i < run.size(); i += 2) {
    ASSERT_TRUE(kept_take(t.k, run[i], &ordinal));
    ASSERT_EQ(ordinal, i);
    m.erase(run[i]);
  }
  expect_same(t.k, m);
  EXPECT_EQ(t.k.removed, 0u);  // the last take of each run cleared the removed ones before it
  EXPECT_EQ(slots_holding(t.k, 0), t.k.capacity);
}

// Blocks kept and freed in turn, as a program's blocks outlive their trace block and are freed
// later, with some freed unseen (put again): the table agrees with a map after each block, and a
// table near half full is rebuilt once in a while, not at every block.
TEST(KeptTable, AgreesWithAMapThroughChurn) {
  table t;
  std::unordered_map<std::uintptr_t, std::uint64_t> m;
  std::vector<std::uintptr_t> live;
  std::mt19937_64 rng(42);
  std::uint64_t next_ordinal = 0;
  std::uintptr_t next_address = 0x7f0000000000u;
  std::size_t rebuilds = 0;
  for (int block = 0; block < 400; ++block) {
    // A block keeps 100 allocations, 5 of them at addresses kept already, the others at new
    // addresses one after the other (a heap that grows: the frees leave removed entries behind
    // in windows that no new block comes to).
    std::vector<std::uintptr_t> kept;
    for (int i = 0; i < 100; ++i) {
      if (i < 5 && !live.empty()) {
        kept.push_back(live[rng() % live.size()]);
      } else {
        kept.push_back(next_address);
        next_address += 16;
      }
    }
    // A rebuild, where the table is or in a new mapping, grows it or empties its removed slots.
    const std::size_t capacity = t.k.capacity, removed = t.k.removed;
    ASSERT_TRUE(kept_reserve(t.k, kept.size()));
    if (t.k.capacity != capacity || t.k.removed < removed) ++rebuilds;
    for (std::uintptr_t a : kept) {
      std::uint64_t replaced = 0;
      const bool was = kept_put(t.k, a, next_ordinal, &replaced);
      auto it = m.find(a);
      ASSERT_EQ(was, it != m.end());
      if (was) {
        ASSERT_EQ(replaced, it->second);
      } else {
        live.push_back(a);
      }
      m[a] = next_ordinal++;
    }
    // Frees of about as many, the table staying near 2,000 entries.
    const std::size_t frees = live.size() > 2000 ? 100 : 60;
    for (std::size_t i = 0; i < frees && !live.empty(); ++i)
      ASSERT_NO_FATAL_FAILURE(take_one_at_random(t.k, m, live, rng));
    std::uint64_t ordinal = 0;
    ASSERT_FALSE(kept_take(t.k, 0x10, &ordinal));
    expect_same(t.k, m);
  }
  EXPECT_GT(m.size(), 1500u);
  // 400 blocks of about 200 takes and puts, over a table of 4,096 slots and then 8,192: a rebuild
  // takes 512 of them at least (an eighth of the slots). At every block it would be 400.
  EXPECT_LE(rebuilds, 2 + 400 * 200 / 512);
  EXPECT_GE(rebuilds, 3u);  // the case it is about: removed entries filled the table
}

// A table past 4 MiB is mapped for huge pages (os.hpp's map_table): at a multiple of 2 MiB, and
// still a table that keeps every entry through its growth from 48 KiB.
TEST(KeptTable, LargeTablesAreAlignedForHugePages) {
  table t;
  std::unordered_map<std::uintptr_t, std::uint64_t> m;
  std::uintptr_t address = 0x7f0000000000u;
  for (std::uint64_t ordinal = 0; ordinal < 400000; ++ordinal) {
    if (ordinal % 1000 == 0) {
      ASSERT_TRUE(kept_reserve(t.k, 1000));
    }
    std::uint64_t replaced = 0;
    ASSERT_FALSE(kept_put(t.k, address, ordinal, &replaced));
    m[address] = ordinal;
    address += 48;
  }
  ASSERT_GE(t.k.capacity * sizeof(kept_entry), lowalloc::trace::huge_from);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.k.slots) % lowalloc::trace::huge_page_bytes, 0u);
  expect_same(t.k, m);
  // Taken back in the order of their addresses, as a container's elements are freed.
  for (std::uintptr_t a = 0x7f0000000000u; a < address; a += 48) {
    std::uint64_t ordinal = 0;
    ASSERT_TRUE(kept_take(t.k, a, &ordinal));
    ASSERT_EQ(ordinal, m.at(a));
  }
  EXPECT_EQ(t.k.count, 0u);
}

// Whether the process's address space is unlimited, as the table's reserved space needs
// (os.hpp, reserve_table).
bool address_space_unlimited() {
  rlimit limit{};
  return getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur == RLIM_INFINITY;
}

// Stretches of address (kept_window_address_bits apart) whose blocks land in the table's last
// window of slots at `capacity` slots and at every capacity up to `largest`: a run that overflows
// that window crosses the table's end into its first slots.
std::vector<std::uintptr_t> last_window_stretches(std::size_t capacity, std::size_t largest,
                                                  std::size_t n) {
  using lowalloc::trace::kept_window_address_bits;
  using lowalloc::trace::kept_window_slots;
  kept_table probe{nullptr, 0, 0, 0, 0};
  std::vector<std::uintptr_t> stretches;
  for (std::uintptr_t s = 0x20000; stretches.size() < n; ++s) {
    const std::uintptr_t start = s << kept_window_address_bits;
    bool last = true;
    for (std::size_t c = capacity; c <= largest && last; c *= 2) {
      probe.capacity = c;
      last =
          lowalloc::trace::kept_slot(probe, start) / kept_window_slots == c / kept_window_slots - 1;
    }
    if (last) stretches.push_back(start);
  }
  return stretches;
}

// Grown from 4,096 slots to 2^19 and rebuilt without growing a few times, the table stays where
// it is while its reserved space (table_space.hpp: 4 times its size, 2 MiB at least) holds it:
// every rebuild, and every growth but the one past 2 MiB, which moves it once, to 12 MiB. It
// holds every entry through them.
TEST(KeptTable, GrowsAndIsRebuiltWhereItIs) {
  if (!address_space_unlimited()) GTEST_SKIP() << "the address space is limited (ulimit -v)";
  table t;
  std::unordered_map<std::uintptr_t, std::uint64_t> m;
  std::vector<std::uintptr_t> live;
  std::mt19937_64 rng(7);
  std::uint64_t next_ordinal = 0;
  std::uintptr_t next_address = 0x560000000000u;
  ASSERT_TRUE(kept_reserve(t.k, 1));
  EXPECT_EQ(t.k.reserved, std::size_t{2} << 20);
  std::size_t growths = 0, rebuilds = 0, moves = 0;
  for (int block = 0; block < 800; ++block) {
    const std::size_t puts = block < 500 ? 1000 : 200;
    const std::size_t capacity = t.k.capacity, removed = t.k.removed, reserved = t.k.reserved;
    const kept_entry* at = t.k.slots;
    ASSERT_TRUE(kept_reserve(t.k, puts));
    growths += t.k.capacity != capacity ? 1u : 0u;
    rebuilds += t.k.capacity == capacity && t.k.removed < removed ? 1u : 0u;
    if (t.k.capacity * sizeof(kept_entry) <= reserved) {
      ASSERT_EQ(t.k.slots, at) << "block " << block << ", " << t.k.capacity << " slots";
    } else {
      ++moves;
      EXPECT_EQ(t.k.reserved, 4 * t.k.capacity * sizeof(kept_entry));
    }
    for (std::size_t i = 0; i < puts; ++i) {
      std::uint64_t replaced = 0;
      ASSERT_FALSE(kept_put(t.k, next_address, next_ordinal, &replaced));
      m[next_address] = next_ordinal++;
      live.push_back(next_address);
      next_address += 32;
    }
    // Frees at random places: removed entries in every run.
    for (std::size_t i = 0; i < puts * 3 / 4 + (block < 500 ? 0 : 50); ++i)
      ASSERT_NO_FATAL_FAILURE(take_one_at_random(t.k, m, live, rng));
    if (block % 50 == 0) expect_same(t.k, m);
  }
  expect_same(t.k, m);
  EXPECT_EQ(t.k.capacity, std::size_t{1} << 19);  // 125,000 entries
  EXPECT_EQ(growths, 7u);                         // 2^12 to 2^19
  EXPECT_EQ(moves, 1u);                           // to 2^18 slots, 3 MiB
  EXPECT_GE(rebuilds, 3u);
}

// A table whose run crosses its end as it grows: the blocks of a stretch of address, 16 bytes
// apart, fill the last window of slots, at 4,096 slots and at twice as many, and `past` blocks of
// more such stretches go past it into the first slots. Blocks elsewhere fill the table to its
// growth, every 7th taken back. Growing, the entries of the first slots are held aside and placed
// last; those of the last window go to the new last window, and the others past its end again.
// The table stays where it is and keeps every entry.
void grow_with_a_run_across_the_end(std::size_t past) {
  using lowalloc::trace::kept_window_slots;
  table t;
  ASSERT_TRUE(kept_reserve(t.k, 1));
  const kept_entry* first = t.k.slots;
  const std::size_t capacity = t.k.capacity;
  const std::size_t n = 1 + (past + kept_window_slots - 1) / kept_window_slots;
  const std::vector<std::uintptr_t> stretches = last_window_stretches(capacity, capacity * 2, n);
  ASSERT_EQ(stretches.size(), n);
  std::vector<std::uintptr_t> addresses;
  for (std::size_t k = 0; addresses.size() < kept_window_slots + past; ++k)
    for (std::size_t i = 0; i < kept_window_slots && addresses.size() < kept_window_slots + past;
         ++i)
      addresses.push_back(stretches[k] + 16 * i);
  std::unordered_map<std::uintptr_t, std::uint64_t> m;
  std::uint64_t ordinal = 0, replaced = 0;
  ASSERT_TRUE(kept_reserve(t.k, addresses.size()));
  for (std::uintptr_t a : addresses) {
    ASSERT_FALSE(kept_put(t.k, a, ordinal, &replaced));
    m[a] = ordinal++;
  }
  // The blocks after the first stretch's went past the end: the first slots hold them.
  for (std::size_t i = 0; i < past; ++i)
    ASSERT_EQ(t.k.slots[i].addr(), addresses[kept_window_slots + i]) << i;
  ASSERT_EQ(t.k.slots[past].key(), 0u);
  // Up to half the slots: the next reserve grows the table. Blocks whose home is near either end
  // are left out, so that the run from the first slot is the blocks that went past the end and no
  // more: those are what the growth holds aside.
  const std::size_t margin = 8 * kept_window_slots;
  for (std::uintptr_t a = 0x7f0000000000u; (t.k.count + t.k.removed + 1) * 2 <= capacity; a += 48) {
    const std::size_t home = lowalloc::trace::kept_slot(t.k, a);
    if (home < margin || home >= capacity - margin) continue;
    ASSERT_FALSE(kept_put(t.k, a, ordinal, &replaced));
    m[a] = ordinal++;
    if (ordinal % 7 == 0) {
      ASSERT_TRUE(kept_take(t.k, a, &replaced));
      m.erase(a);
    }
  }
  expect_same(t.k, m);
  ASSERT_EQ(t.k.slots[past].key(), 0u);
  ASSERT_TRUE(kept_reserve(t.k, 100));
  EXPECT_EQ(t.k.capacity, capacity * 2);
  EXPECT_EQ(t.k.slots, first);
  expect_same(t.k, m);
  take_all(t.k, m);
}

TEST(KeptTable, RunsAcrossTheEndSurviveAGrowthInPlace) {
  if (!address_space_unlimited()) GTEST_SKIP() << "the address space is limited (ulimit -v)";
  grow_with_a_run_across_the_end(12);  // held aside on the stack
}

// Longer than the 16 entries a rebuild in place holds aside on the thread's stack: they are held
// in memory of their own.
TEST(KeptTable, ALongRunAcrossTheEndIsHeldAsideInMemoryOfItsOwn) {
  if (!address_space_unlimited()) GTEST_SKIP() << "the address space is limited (ulimit -v)";
  grow_with_a_run_across_the_end(200);
}

// Slots a lookup of each entry's address reads on average, when the address is not in the table
// (a put reads that many, to find whether it is kept already): from the entry's home to the end
// of its run.
double slots_to_run_end(const kept_table& k) {
  std::size_t slots = 0;
  kept_for_each(k, [&](const kept_entry& e) {
    for (std::size_t i = lowalloc::trace::kept_slot(k, e.addr()); k.slots[i].key() != 0;
         i = (i + 1) & (k.capacity - 1))
      ++slots;
    ++slots;  // the empty slot
  });
  return static_cast<double>(slots) / static_cast<double>(k.count);
}

// A heap of small blocks: 400,000 blocks kept, 32 bytes apart (the smallest block glibc's malloc
// gives) or 48, put as the blocks of a trace keep them. Where two stretches of address share a
// window their blocks fill it, and its run flows into the next. A put at the end reads to the end
// of its run: with a window for each 4 KiB page (256 slots) 229 slots here, and 137 with blocks 48
// bytes apart; 58 and 2.8 with windows of 2 KiB, 11.3 and 6.2 with 512 bytes; 2.0 and 2.2 with
// windows of 1 KiB.
TEST(KeptTable, SmallBlocksMakeShortRuns) {
  for (std::uintptr_t apart : {32u, 48u}) {
    table t;
    std::uintptr_t a = 0x55d000000000u;
    std::uint64_t ordinal = 0, replaced = 0;
    for (int block = 0; block < 200; ++block) {
      ASSERT_TRUE(kept_reserve(t.k, 2000));
      for (int i = 0; i < 2000; ++i, a += apart)
        ASSERT_FALSE(kept_put(t.k, a, ordinal++, &replaced));
    }
    EXPECT_LT(slots_to_run_end(t.k), 4.0)
        << "blocks " << apart << " bytes apart, " << t.k.capacity << " slots";
  }
}

// An entry is 12 bytes: the address over 8 and the ordinal in 48 bits each, read back whole at
// their largest; what does not fit is refused by kept_fits, and its block is not kept.
TEST(KeptTable, EntriesHoldAddressesAndOrdinalsOf48Bits) {
  using lowalloc::trace::kept_fits;
  EXPECT_EQ(sizeof(kept_entry), 12u);
  const std::uint64_t largest_ordinal = (std::uint64_t{1} << 48) - 1;
  const std::uintptr_t largest_address = (std::uintptr_t{1} << 51) - 8;
  kept_entry e{};
  e.set(largest_address >> 3, largest_ordinal);
  EXPECT_EQ(e.addr(), largest_address);
  EXPECT_EQ(e.ordinal(), largest_ordinal);
  e.set(0x7ffc12345678u >> 3, 0x123456789abcu);
  EXPECT_EQ(e.addr(), 0x7ffc12345678u);
  EXPECT_EQ(e.ordinal(), 0x123456789abcu);
  e.set_key(kept_removed);
  EXPECT_EQ(e.key(), kept_removed);
  EXPECT_EQ(e.ordinal(), 0x123456789abcu);

  EXPECT_TRUE(kept_fits(0x7ffc12345670u | 0x555555559000u, 1000));
  EXPECT_TRUE(kept_fits(largest_address, largest_ordinal + 1));
  EXPECT_FALSE(kept_fits(largest_address, largest_ordinal + 2));  // ordinal 2^48 in the block
  EXPECT_FALSE(kept_fits(std::uintptr_t{1} << 51, 1000));
  EXPECT_FALSE(kept_fits(0x7ffc12345674u, 1000));  // not a multiple of 8

  // In a table, at the largest address and ordinal and next to entries of small ones.
  table t;
  ASSERT_TRUE(kept_reserve(t.k, 3));
  std::uint64_t replaced = 0, ordinal = 0;
  ASSERT_FALSE(kept_put(t.k, largest_address, largest_ordinal, &replaced));
  ASSERT_FALSE(kept_put(t.k, 0x1008, 3, &replaced));
  ASSERT_FALSE(kept_put(t.k, largest_address - 8, largest_ordinal - 1, &replaced));
  ASSERT_TRUE(kept_take(t.k, largest_address, &ordinal));
  EXPECT_EQ(ordinal, largest_ordinal);
  ASSERT_TRUE(kept_take(t.k, 0x1008, &ordinal));
  EXPECT_EQ(ordinal, 3u);
  ASSERT_TRUE(kept_take(t.k, largest_address - 8, &ordinal));
  EXPECT_EQ(ordinal, largest_ordinal - 1);
  EXPECT_EQ(t.k.count, 0u);
}

// The table's memory, in the traced process, stays within 64 bytes a kept block as it grows (a
// rebuilt table is more than 3/16 full): 12-byte entries. (16-byte entries took up to 85 bytes a
// block: python3 building a dict, 32 MiB for 600,000 blocks.)
TEST(KeptTable, MemoryStaysWithin64BytesABlock) {
  table t;
  std::uintptr_t address = 0x555555600000u;
  std::size_t largest = 0;
  for (std::uint64_t ordinal = 0; ordinal < 1200000; ++ordinal) {
    if (ordinal % 2000 == 0) {
      ASSERT_TRUE(kept_reserve(t.k, 2000));
      if (ordinal >= 2000) {
        const double bytes_a_block = static_cast<double>(t.k.capacity * sizeof(kept_entry)) /
                                     static_cast<double>(ordinal + 2000);
        ASSERT_LE(bytes_a_block, 64.0) << ordinal << " blocks, " << t.k.capacity << " slots";
      }
      largest = t.k.capacity;
    }
    std::uint64_t replaced = 0;
    ASSERT_FALSE(kept_put(t.k, address, ordinal, &replaced));
    address += 64;
  }
  EXPECT_EQ(t.k.count, 1200000u);
  EXPECT_LE(largest * sizeof(kept_entry), std::size_t{48} << 20);  // 16-byte entries: 64 MiB
}

}  // namespace
