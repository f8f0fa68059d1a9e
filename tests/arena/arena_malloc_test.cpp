// arena built with LOWALLOC_ARENA_USE_MALLOC=1 (set by CMake for this executable only): every
// allocation is one heap block of its own, upstream is never used, and release, reset and
// destruction free every block.
#include <lowalloc/alloc_count.hpp>
#include <lowalloc/arena.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <list>
#include <map>
#include <memory_resource>
#include <new>
#include <string>
#include <vector>

#include "arena_support.hpp"

#if !LOWALLOC_ARENA_USE_MALLOC
#error "arena_malloc_test must be built with -DLOWALLOC_ARENA_USE_MALLOC=1"
#endif

namespace {

using lowalloc::arena;
using lowalloc::arena_allocator;
using lowalloc_test::recording_resource;

TEST(ArenaUseMalloc, EveryAllocationIsAHeapAllocationOfItsOwn) {
  recording_resource up;
  arena<4096> a(&up);
  std::vector<void*> blocks;
  for (std::size_t i = 1; i <= 100; ++i) {
    void* p = nullptr;
    LOWALLOC_EXPECT_ALLOCATIONS(1, p = a.allocate(i, 8));
    ASSERT_NE(p, nullptr);
    std::memset(p, static_cast<int>(i), i);
    blocks.push_back(p);
  }
  EXPECT_EQ(a.stats().chunks, 100u);
  // Each request rounded up to 16: 1..16 -> 16, 17..32 -> 32, ..., 97..100 -> 112.
  std::size_t rounded = 0;
  for (std::size_t i = 1; i <= 100; ++i) rounded += (i + 15) / 16 * 16;
  EXPECT_EQ(a.stats().bytes_allocated, rounded);
  EXPECT_GE(a.stats().bytes_upstream, a.stats().bytes_allocated);
  EXPECT_EQ(up.allocations(), 0u);  // the global heap, not upstream
  for (void* p : blocks) {
    EXPECT_TRUE(a.owns(p));
    // Not in the inline buffer: inside the arena object there is no block.
    const auto x = reinterpret_cast<std::uintptr_t>(p);
    const auto lo = reinterpret_cast<std::uintptr_t>(&a);
    EXPECT_FALSE(x >= lo && x < lo + sizeof(a));
  }
  for (std::size_t i = 1; i <= 100; ++i) {
    const auto* b = static_cast<const unsigned char*>(blocks[i - 1]);
    for (std::size_t k = 0; k < i; ++k) ASSERT_EQ(b[k], static_cast<unsigned char>(i));
  }

  lowalloc::alloc_counter scope;
  a.release();
  EXPECT_EQ(scope.deallocations(), 100u);
  EXPECT_EQ(a.stats().chunks, 0u);
  EXPECT_EQ(a.stats().bytes_upstream, 0u);
  EXPECT_EQ(a.stats().bytes_allocated, 0u);
}

TEST(ArenaUseMalloc, ResetAndDestructionFreeEverything) {
  lowalloc::alloc_counter scope;
  {
    arena<256> a;
    for (int i = 0; i < 50; ++i) (void)a.allocate(16);
    EXPECT_EQ(scope.allocations(), 50u);
    a.reset();  // nothing is kept: every block goes back
    EXPECT_EQ(scope.deallocations(), 50u);
    EXPECT_EQ(a.stats().chunks, 0u);
    for (int i = 0; i < 30; ++i) (void)a.allocate(16);
  }
  EXPECT_EQ(scope.allocations(), 80u);
  EXPECT_EQ(scope.deallocations(), 80u);
}

TEST(ArenaUseMalloc, AlignmentIsHonoured) {
  arena<0> a;
  for (std::size_t align = 1; align <= 8192; align *= 2) {
    void* p = a.allocate(3, align);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u) << align;
    std::memset(p, 1, 3);
  }
}

TEST(ArenaUseMalloc, ContainersWork) {
  lowalloc::alloc_counter scope;
  {
    arena<1024> a;
    std::vector<int, arena_allocator<int>> v(a);
    for (int i = 0; i < 1000; ++i) v.push_back(i);
    EXPECT_EQ(v[999], 999);
    std::list<int, arena_allocator<int>> l(a);
    for (int i = 0; i < 10; ++i) l.push_back(i);
    std::pmr::map<int, std::pmr::string> m(&a);
    for (int i = 0; i < 10; ++i) m.try_emplace(i, "long enough to need a heap buffer, surely");
    EXPECT_EQ(m.size(), 10u);
    EXPECT_EQ(a.stats().chunks, scope.allocations());  // one block per container allocation
  }
  EXPECT_EQ(scope.deallocations(), scope.allocations());
}

TEST(ArenaUseMalloc, OverflowStillThrows) {
  arena<0> a;
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  EXPECT_THROW((void)a.allocate(max - 8, 16), std::bad_alloc);
  EXPECT_THROW((void)a.allocate(max / 2 + 1, max / 2 + 1), std::bad_alloc);
  EXPECT_EQ(a.stats().chunks, 0u);
}

#if LOWALLOC_ARENA_POISON && GTEST_HAS_DEATH_TEST
int read_int(const int* p) { return *static_cast<const volatile int*>(p); }

TEST(ArenaUseMallocDeathTest, AsanSeesEachBlock) {
  arena<256> a;
  int* p = static_cast<int*>(a.allocate(4 * sizeof(int), alignof(int)));
  p[0] = 1;
  EXPECT_DEATH(read_int(p + 4), "heap-buffer-overflow");
  a.release();
  EXPECT_DEATH(read_int(p), "heap-use-after-free");
}
#endif

}  // namespace
