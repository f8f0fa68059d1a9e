// The analyzer's hash map and growable array (src/analyze/flat_map.hpp) past the size where
// their memory is a mapping of its own and grows in place.
#include "analyze/flat_map.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

using lowalloc::analyze::detail::u64_map;

// Every entry must still be found after each doubling, with keys that fill long runs (consecutive
// addresses) and keys spread at random, and with erasures between the growths.
TEST(FlatMap, GrowsInPlaceWithoutLosingEntries) {
  u64_map<std::uint64_t> m;
  std::unordered_map<std::uint64_t, std::uint64_t> ref;
  std::mt19937_64 rng(2);
  for (std::uint64_t i = 0; i < 400000; ++i) {
    const std::uint64_t key = i % 2 == 0 ? 0x7f0000000000u + i * 8 : (rng() >> 8) << 4;
    bool inserted = false;
    m.get(key, inserted) = i;
    ref[key] = i;
    if (i % 3 == 0) {
      const std::uint64_t gone = 0x7f0000000000u + (i / 3 * 2) * 8;
      std::uint64_t out = 0;
      const bool had = ref.erase(gone) == 1;
      EXPECT_EQ(m.erase(gone, out), had);
    }
  }
  ASSERT_EQ(m.size(), ref.size());
  for (const auto& [k, v] : ref) {
    const std::uint64_t* p = m.find(k);
    ASSERT_NE(p, nullptr) << k;
    EXPECT_EQ(*p, v);
  }
}

// Ordinals in runs (runs_of): made in order, most freed soon and some kept, as a stream's
// allocations are; every survivor is found after the growths.
TEST(FlatMap, KeysInRunsAreFoundAfterGrowth) {
  u64_map<std::uint64_t, lowalloc::analyze::detail::runs_of<4>> m;
  std::unordered_map<std::uint64_t, std::uint64_t> ref;
  std::mt19937_64 rng(3);
  for (std::uint64_t ordinal = 0; ordinal < 600000; ++ordinal) {
    bool inserted = false;
    m.get(ordinal, inserted) = ordinal * 3;
    EXPECT_TRUE(inserted);
    ref[ordinal] = ordinal * 3;
    if (rng() % 4 != 0 && ordinal >= 40) {  // frees one of the recent ones, or none
      const std::uint64_t gone = ordinal - rng() % 40;
      std::uint64_t out = 0;
      const bool had = ref.erase(gone) == 1;
      ASSERT_EQ(m.erase(gone, out), had);
      if (had) {
        EXPECT_EQ(out, gone * 3);
      }
    }
  }
  ASSERT_EQ(m.size(), ref.size());
  for (const auto& [k, v] : ref) {
    const std::uint64_t* p = m.find(k);
    ASSERT_NE(p, nullptr) << k;
    EXPECT_EQ(*p, v);
  }
  EXPECT_EQ(m.find(600000), nullptr);
}

// A moved map keeps its table and leaves an empty one that still works.
TEST(FlatMap, MovedFromIsEmpty) {
  u64_map<std::uint32_t> m;
  for (std::uint32_t i = 0; i < 200000; ++i) {
    bool inserted = false;
    m.get(std::uint64_t{i} * 16, inserted) = i;
  }
  u64_map<std::uint32_t> moved(std::move(m));
  EXPECT_EQ(m.size(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(m.find(16), nullptr);
  bool inserted = false;
  m.get(16, inserted) = 7;
  EXPECT_TRUE(inserted);
  EXPECT_EQ(moved.size(), 200000u);
  ASSERT_NE(moved.find(16), nullptr);
  EXPECT_EQ(*moved.find(16), 1u);
}

// The array grows one element at a time past the size where it moves its pages instead of
// copying them; what was written stays, and new elements start as zero.
TEST(GrowArray, KeepsItsElementsAsItGrows) {
  struct counts {
    std::uint64_t a;
    std::uint32_t b;
  };
  lowalloc::analyze::detail::grow_array<counts> v;
  for (std::uint32_t i = 0; i < 300000; ++i) {
    v.grow_to(std::size_t{i} + 1);
    ASSERT_EQ(v[i].a, 0u);
    ASSERT_EQ(v[i].b, 0u);
    v[i] = counts{std::uint64_t{i} * 7, i};
  }
  v.grow_to(10);  // never shrinks
  ASSERT_EQ(v.size(), 300000u);
  for (std::uint32_t i = 0; i < 300000; ++i) {
    ASSERT_EQ(v[i].a, std::uint64_t{i} * 7);
    ASSERT_EQ(v[i].b, i);
  }
}

// A copy has the elements and is apart from the original; at() checks its index.
TEST(GrowArray, CopiesAreApartAndAtChecksTheIndex) {
  lowalloc::analyze::detail::grow_array<std::uint64_t> v;
  v.grow_to(300000);  // past the size where the array is a mapping of its own
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = i * 3;
  lowalloc::analyze::detail::grow_array<std::uint64_t> copy = v;
  ASSERT_EQ(copy.size(), v.size());
  copy[7] = 1;
  EXPECT_EQ(v[7], 21u);
  for (std::size_t i = 8; i < copy.size(); ++i) ASSERT_EQ(copy[i], i * 3);
  EXPECT_EQ(copy.at(299999), 299999u * 3);
  EXPECT_THROW(copy.at(300000), std::out_of_range);
  copy = lowalloc::analyze::detail::grow_array<std::uint64_t>();
  EXPECT_TRUE(copy.empty());
}

// Faulting pages in ahead of the writes leaves what is written there as it was.
TEST(GrowArray, PrefaultKeepsTheContents) {
  std::vector<std::uint32_t> v(std::size_t{4} << 20);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint32_t>(i * 2654435761u);
  lowalloc::analyze::detail::prefault(v.data(), v.size() * sizeof v[0]);
  for (std::size_t i = 0; i < v.size(); ++i)
    ASSERT_EQ(v[i], static_cast<std::uint32_t>(i * 2654435761u)) << i;
}

// The flags of the mapping that holds `address`, as /proc/self/smaps lists them ("rd wr mr ..."),
// or "" if no mapping holds it.
std::string mapping_flags(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0;
    std::uintptr_t hi = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> lo >> dash >> hi && dash == '-' &&
        line.find(':') > line.find(' ')) {  // a mapping's first line, not a field ("Rss: ...")
      inside = lo <= at && at < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.substr(8);
    }
  }
  return "";
}

bool has_flag(const std::string& flags, const std::string& flag) {
  std::istringstream words(flags);
  std::string w;
  while (words >> w)
    if (w == flag) return true;
  return false;
}

// How many of the pages of [p, p + bytes) are in memory.
std::size_t resident_pages(const void* p, std::size_t bytes) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const auto first = reinterpret_cast<std::uintptr_t>(p) / page * page;
  const std::size_t pages = (reinterpret_cast<std::uintptr_t>(p) + bytes - first + page - 1) / page;
  std::vector<unsigned char> in(pages);
  if (mincore(reinterpret_cast<void*>(first), pages * page, in.data()) != 0) return 0;
  std::size_t n = 0;
  for (const unsigned char c : in) n += c & 1;
  return n;
}

// A large array is faulted in ahead of its first write (prefault), in the pages the kernel gives
// every mapping: it does not ask for huge pages (no "hg" flag, MADV_HUGEPAGE), whose faults
// stalled on a guest whose host backs memory as it is first touched. A grow_array past the size
// where it is a mapping of its own is made the same way.
TEST(GrowArray, LargeArraysAreFaultedInAheadWithoutAskingForHugePages) {
  constexpr std::size_t bytes = std::size_t{16} << 20;
  lowalloc::analyze::detail::grow_array<std::uint64_t> v;
  v.grow_to(bytes / sizeof(std::uint64_t));
  EXPECT_FALSE(has_flag(mapping_flags(&v[v.size() / 2]), "hg")) << mapping_flags(&v[v.size() / 2]);

  // Heap memory not written yet (a block this large is a mapping of its own, not touched).
  std::unique_ptr<unsigned char[]> heap(new unsigned char[bytes]);
  const std::size_t before = resident_pages(heap.get(), bytes);
  const bool done = lowalloc::analyze::detail::prefault(heap.get(), bytes);
  const std::size_t after = resident_pages(heap.get(), bytes);
  const std::size_t pages = bytes / static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (done) {
    EXPECT_LT(before, pages / 2);
    EXPECT_GE(after, pages - 2) << before;  // all but the partial pages at the ends
  }
  EXPECT_FALSE(has_flag(mapping_flags(heap.get() + bytes / 2), "hg"))
      << mapping_flags(heap.get() + bytes / 2);
}

// A table's mapping grows without a copy (mremap) after part of it was faulted in, its contents
// kept.
TEST(TableMemory, GrowsWithoutACopyAfterPartWasFaultedIn) {
  lowalloc::analyze::detail::table_memory m;
  m.allocate(std::size_t{5} << 20);
  m.prepare(std::size_t{3} << 20);
  static_cast<unsigned char*>(m.data())[12345] = 7;
  ASSERT_TRUE(m.extend(std::size_t{16} << 20));
  EXPECT_EQ(static_cast<unsigned char*>(m.data())[12345], 7);
  m.prepare(std::size_t{16} << 20);
  ASSERT_TRUE(m.extend(std::size_t{40} << 20));
  EXPECT_EQ(static_cast<unsigned char*>(m.data())[12345], 7);
}

}  // namespace
