// lowalloc::pool against a model: every pointer distinct, aligned, inside a live slab, its bytes
// intact until it is freed; stats() after every step; empty slabs beyond the keep policy given
// back. Also oversize requests, release(), the pmr face, pool_allocator, allocation counts and
// (with LOWALLOC_ASSERTIONS) the death tests of both pools.
#include <lowalloc/alloc_count.hpp>
#include <lowalloc/pool.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <ostream>
#include <random>
#include <thread>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "pool_test_support.hpp"

namespace {

using pool_test::counting_resource;

constexpr std::size_t kOneSlab = lowalloc::pool_options::one_slab;

struct config {
  std::size_t slot_size;
  std::size_t slot_align;
  std::size_t slots_per_slab;
  std::size_t keep_empty_slabs;
  std::size_t recycled_slots = 0;  // 0: every free goes to the bitmaps at once
};

std::ostream& operator<<(std::ostream& os, const config& c) {
  os << "{slot " << c.slot_size << ", align " << c.slot_align << ", per slab " << c.slots_per_slab
     << ", keep " << c.keep_empty_slabs << ", recycled ";
  if (c.recycled_slots == kOneSlab) return os << "one slab}";
  return os << c.recycled_slots << "}";
}

// The most slots a pool's recycle list may hold.
std::size_t recycle_limit(const lowalloc::pool& p, std::size_t option) {
#if LOWALLOC_POOL_POISON
  static_cast<void>(p);
  static_cast<void>(option);
  return 0;  // under ASan every free slot stays poisoned: no recycle list
#else
  if (p.slot_size() < 2 * sizeof(void*)) return 0;
  return option == kOneSlab ? p.slots_per_slab() : option;
#endif
}

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// The live blocks of a pool and what the pool must report about them.
class pool_model {
 public:
  pool_model(lowalloc::pool& p, counting_resource& up, std::size_t keep, std::size_t recycle_limit)
      : pool_(p), up_(up), keep_(keep), recycle_limit_(recycle_limit) {}
  pool_model(const pool_model&) = delete;
  pool_model& operator=(const pool_model&) = delete;
  ~pool_model() { free_all(); }

  // Allocates `bytes` (at most the slot size) and checks the block.
  void* allocate(std::size_t bytes) {
    void* p = pool_.allocate(bytes, pool_.slot_align());
    const auto a = addr(p);
    EXPECT_EQ(a % pool_.slot_align(), 0u) << p;
    // Inside a live slab of the upstream resource, which starts at p rounded down to the slab.
    const auto blk = up_.block_of(p, pool_.slot_size());
    EXPECT_NE(blk.first, nullptr) << p << " is not inside an upstream block";
    EXPECT_EQ(addr(blk.first), a & ~(pool_.slab_bytes() - 1));
    EXPECT_EQ(blk.second.bytes, pool_.slab_bytes());
    EXPECT_GE(a, addr(blk.first) + 64) << "a slot overlaps the slab header";
    // Not overlapping any live block.
    auto next = live_.lower_bound(p);
    if (next != live_.end()) {
      EXPECT_NE(next->first, p) << "pointer handed out twice";
      EXPECT_GE(addr(next->first), a + pool_.slot_size()) << "overlapping slots";
    }
    if (next != live_.begin()) {
      auto prev = std::prev(next);
      EXPECT_GE(a, addr(prev->first) + pool_.slot_size()) << "overlapping slots";
    }
    const unsigned char tag = static_cast<unsigned char>(serial_++);
    std::memset(p, tag, bytes);
    live_[p] = {bytes, tag};
    ++per_slab_[a & ~(pool_.slab_bytes() - 1)];
    return p;
  }

  void deallocate(void* p) {
    auto it = live_.find(p);
    ASSERT_NE(it, live_.end());
    const auto* bytes = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < it->second.bytes; ++i) {
      ASSERT_EQ(bytes[i], it->second.tag) << "slot " << p << " was overwritten at byte " << i;
    }
    pool_.deallocate(p, it->second.bytes, pool_.slot_align());
    live_.erase(it);
    const auto slab = addr(p) & ~(pool_.slab_bytes() - 1);
    if (--per_slab_[slab] == 0) per_slab_.erase(slab);
  }

  void free_all() {
    while (!live_.empty()) deallocate(live_.begin()->first);
  }

  // stats() and the upstream resource agree with the model.
  void check() const {
    const lowalloc::pool_stats st = pool_.stats();
    ASSERT_EQ(st.slots_in_use, live_.size());
    ASSERT_EQ(st.oversize_allocations, 0u);
    ASSERT_EQ(st.slabs, up_.live_blocks());
    ASSERT_EQ(st.bytes_upstream, up_.live_bytes());
    ASSERT_EQ(st.bytes_upstream, st.slabs * pool_.slab_bytes());
    const std::size_t per = pool_.slots_per_slab();
    ASSERT_GE(st.slabs, (live_.size() + per - 1) / per);
    ASSERT_GE(st.slabs, per_slab_.size());
    // A slot on the recycle list still counts as used in its slab: each may hold one slab that
    // is otherwise empty. With no recycle list this is the strict policy.
    const std::size_t recycled = pool_.recycled();
    ASSERT_LE(recycled, recycle_limit_);
    ASSERT_LE(st.slabs - per_slab_.size(), keep_ + recycled)
        << "empty slabs beyond the keep policy";
  }

  // After trim() nothing is on the recycle list and the keep policy holds strictly.
  void trim_and_check() {
    pool_.trim();
    ASSERT_EQ(pool_.recycled(), 0u);
    check();
  }

  std::size_t size() const { return live_.size(); }
  void* nth(std::size_t i) const { return std::next(live_.begin(), static_cast<long>(i))->first; }

 private:
  struct entry {
    std::size_t bytes;
    unsigned char tag;
  };
  lowalloc::pool& pool_;
  counting_resource& up_;
  std::size_t keep_;
  std::size_t recycle_limit_;
  std::map<void*, entry> live_;
  std::map<std::uintptr_t, std::size_t> per_slab_;
  unsigned serial_ = 1;
};

class PoolModelTest : public ::testing::TestWithParam<config> {
 protected:
  PoolModelTest()
      : pool_(GetParam().slot_size, GetParam().slot_align,
              lowalloc::pool_options{GetParam().slots_per_slab, GetParam().keep_empty_slabs,
                                     GetParam().recycled_slots},
              &up_),
        model_(pool_, up_, GetParam().keep_empty_slabs,
               recycle_limit(pool_, GetParam().recycled_slots)) {}

  // Enough blocks for several slabs, bounded for the small-slot configurations.
  std::size_t bulk_count() const {
    return std::min<std::size_t>(pool_.slots_per_slab() * 4 + 3, 5000);
  }

  counting_resource up_;
  lowalloc::pool pool_;
  pool_model model_;
};

TEST_P(PoolModelTest, Layout) {
  const config c = GetParam();
  EXPECT_GE(pool_.slot_size(), c.slot_size);
  EXPECT_EQ(pool_.slot_size() % c.slot_align, 0u);
  EXPECT_LT(pool_.slot_size(), c.slot_size + c.slot_align);
  EXPECT_EQ(pool_.slot_align(), c.slot_align);
  const std::size_t slab = pool_.slab_bytes();
  EXPECT_EQ(slab & (slab - 1), 0u) << "slab size is a power of two";
  EXPECT_GE(slab, pool_.slots_per_slab() * pool_.slot_size());
  if (c.slots_per_slab != 0) {
    EXPECT_EQ(pool_.slots_per_slab(), std::min<std::size_t>(c.slots_per_slab, 4096));
  } else {
    EXPECT_GE(pool_.slots_per_slab(), 64u);
    if (64 * pool_.slot_size() < 8 * 1024 && pool_.slots_per_slab() < 4096) {
      EXPECT_EQ(slab, 16u * 1024u) << "default 16 KiB slabs";
    }
  }
  EXPECT_EQ(up_.allocations(), 0u) << "no memory before the first allocation";
}

TEST_P(PoolModelTest, Single) {
  for (int i = 0; i < 200; ++i) {
    void* p = model_.allocate(pool_.slot_size());
    model_.check();
    model_.deallocate(p);
    model_.check();
  }
  EXPECT_LE(up_.allocations(), 1u + (GetParam().keep_empty_slabs == 0 ? 199u : 0u));
}

TEST_P(PoolModelTest, Bulk) {
  const std::size_t n = bulk_count();
  std::vector<void*> ps;
  for (std::size_t i = 0; i < n; ++i) {
    ps.push_back(model_.allocate(1 + i % pool_.slot_size()));
    model_.check();
  }
  for (void* p : ps) {
    model_.deallocate(p);
    model_.check();
  }
  model_.trim_and_check();
  EXPECT_EQ(pool_.stats().slabs,
            std::min<std::size_t>(GetParam().keep_empty_slabs,
                                  (n + pool_.slots_per_slab() - 1) / pool_.slots_per_slab()));
}

TEST_P(PoolModelTest, ReversedBulk) {
  const std::size_t n = bulk_count();
  std::vector<void*> ps;
  for (std::size_t i = 0; i < n; ++i) {
    ps.push_back(model_.allocate(pool_.slot_size()));
    model_.check();
  }
  for (auto it = ps.rbegin(); it != ps.rend(); ++it) {
    model_.deallocate(*it);
    model_.check();
  }
  model_.trim_and_check();
  // Again: the kept slabs are reused first.
  const std::size_t before = up_.allocations();
  for (std::size_t i = 0; i < std::min(n, pool_.slots_per_slab()); ++i) {
    model_.allocate(pool_.slot_size());
  }
  model_.check();
  if (GetParam().keep_empty_slabs > 0) {
    EXPECT_EQ(up_.allocations(), before);
  }
}

TEST_P(PoolModelTest, RandomChurn) {
  std::mt19937 rng(12345);
  const std::size_t target = bulk_count();
  for (int step = 0; step < 6000; ++step) {
    // Grow for a while, then shrink, then grow again: slabs empty out and fill up.
    const bool growing = (step / 1500) % 2 == 0;
    const unsigned bias = growing ? 70 : 30;
    if (model_.size() == 0 || (model_.size() < target && rng() % 100 < bias)) {
      model_.allocate(1 + rng() % pool_.slot_size());
    } else {
      model_.deallocate(model_.nth(rng() % model_.size()));
    }
    model_.check();
  }
  model_.free_all();
  model_.check();
  model_.trim_and_check();
  EXPECT_LE(pool_.stats().slabs, GetParam().keep_empty_slabs);
}

TEST_P(PoolModelTest, FreeEveryOtherThenRefill) {
  const std::size_t n = bulk_count();
  std::vector<void*> ps;
  for (std::size_t i = 0; i < n; ++i) ps.push_back(model_.allocate(pool_.slot_size()));
  const std::size_t slabs = pool_.stats().slabs;
  for (std::size_t i = 0; i < n; i += 2) model_.deallocate(ps[i]);
  model_.check();
  for (std::size_t i = 0; i < n; i += 2) model_.allocate(pool_.slot_size());
  model_.check();
  EXPECT_EQ(pool_.stats().slabs, slabs) << "the holes are reused before any new slab";
}

// Bitmaps only (recycled_slots = 0): every free reaches its slab at once.
INSTANTIATE_TEST_SUITE_P(
    Configs, PoolModelTest,
    ::testing::Values(config{16, 16, 0, 1}, config{16, 8, 0, 0}, config{24, 8, 0, 2},
                      config{48, 16, 0, 1}, config{1, 1, 0, 1}, config{3, 1, 0, 1},
                      config{100, 4, 0, 1}, config{64, 64, 64, 1}, config{8, 8, 100, 3},
                      config{512, 256, 0, 1}, config{40, 8, 1, 1}, config{32, 32, 65, 0},
                      config{2000, 16, 0, 1}, config{16, 16, 4096, 1}, config{16, 16, 10000, 1}));

// With the recycle list in front of the bitmaps: the default (a slab's worth) and small limits
// that make it overflow (and flush) all the time. Slots of 8 or 3 bytes have no recycle list.
INSTANTIATE_TEST_SUITE_P(Recycling, PoolModelTest,
                         ::testing::Values(config{16, 16, 0, 1, kOneSlab},
                                           config{16, 8, 0, 0, kOneSlab},
                                           config{24, 8, 0, 2, kOneSlab}, config{48, 16, 0, 1, 1},
                                           config{3, 1, 0, 1, kOneSlab}, config{100, 4, 0, 1, 7},
                                           config{64, 64, 64, 1, 2}, config{8, 8, 100, 3, kOneSlab},
                                           config{512, 256, 0, 0, 5}, config{40, 8, 1, 1, kOneSlab},
                                           config{32, 32, 65, 0, 64},
                                           config{16, 16, 4096, 1, kOneSlab}));

TEST(Pool, Defaults) {
  lowalloc::pool p(16);
  EXPECT_EQ(p.slot_size(), 16u);
  EXPECT_EQ(p.slot_align(), alignof(std::max_align_t));
  EXPECT_EQ(p.slab_bytes(), 16u * 1024u);
  EXPECT_GE(p.slots_per_slab(), 900u);
  EXPECT_EQ(p.upstream(), std::pmr::new_delete_resource());
  const lowalloc::pool_stats st = p.stats();
  EXPECT_EQ(st.slots_in_use, 0u);
  EXPECT_EQ(st.slabs, 0u);
  EXPECT_EQ(st.bytes_upstream, 0u);
  EXPECT_EQ(st.oversize_allocations, 0u);

  lowalloc::pool rounded(20, 8);
  EXPECT_EQ(rounded.slot_size(), 24u);
  lowalloc::pool zero(0, 1);
  EXPECT_EQ(zero.slot_size(), 1u);
  void* q = zero.allocate(0, 1);
  EXPECT_NE(q, nullptr);
  zero.deallocate(q, 0, 1);
}

TEST(Pool, InvalidArguments) {
  EXPECT_THROW(lowalloc::pool(16, 3), std::invalid_argument);
  EXPECT_THROW(lowalloc::pool(16, 0), std::invalid_argument);
  EXPECT_THROW(lowalloc::pool(16, 16, {}, nullptr), std::invalid_argument);
  EXPECT_THROW(lowalloc::pool(std::size_t{1} << 40), std::length_error);
  EXPECT_THROW(lowalloc::synchronized_pool(16, 6), std::invalid_argument);
}

TEST(Pool, KeepEmptySlabsPolicy) {
  for (std::size_t keep : {0u, 1u, 2u, 5u}) {
    counting_resource up;
    lowalloc::pool p(32, 16, {64, keep, 0}, &up);
    std::vector<void*> ps;
    for (int i = 0; i < 64 * 4; ++i) ps.push_back(p.allocate(32, 16));
    EXPECT_EQ(p.stats().slabs, 4u);
    for (void* q : ps) p.deallocate(q, 32, 16);
    EXPECT_EQ(p.stats().slabs, std::min<std::size_t>(keep, 4)) << "keep " << keep;
    EXPECT_EQ(up.live_blocks(), std::min<std::size_t>(keep, 4));
    EXPECT_EQ(up.deallocations(), 4 - std::min<std::size_t>(keep, 4));
  }
}

TEST(Pool, AllocatesFromUpstreamOnlyWhenFull) {
  counting_resource up;
  lowalloc::pool p(16, 16, {64, 1, 0}, &up);
  std::vector<void*> ps;
  for (int i = 0; i < 64; ++i) ps.push_back(p.allocate(16));
  EXPECT_EQ(up.allocations(), 1u);
  ps.push_back(p.allocate(16));
  EXPECT_EQ(up.allocations(), 2u);
  // A slot freed in the full first slab is reused before any third slab is taken.
  p.deallocate(ps[10], 16);
  void* const hole = ps[10];
  bool reused = false;
  for (int i = 0; i < 64; ++i) {
    ps[10] = p.allocate(16);
    if (ps[10] == hole) {
      reused = true;
      break;
    }
    ps.push_back(ps[10]);
  }
  EXPECT_TRUE(reused);
  EXPECT_EQ(up.allocations(), 2u);
  for (void* q : ps) p.deallocate(q, 16);
  EXPECT_EQ(up.allocations(), 2u);
  EXPECT_EQ(up.live_blocks(), 1u);
  EXPECT_EQ(p.stats().slots_in_use, 0u);
}

TEST(Pool, OversizeGoesUpstream) {
  counting_resource up;
  lowalloc::pool p(32, 8, {}, &up);
  void* big = p.allocate(33, 8);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big) % 8, 0u);
  std::memset(big, 1, 33);
  lowalloc::pool_stats st = p.stats();
  EXPECT_EQ(st.oversize_allocations, 1u);
  EXPECT_EQ(st.slots_in_use, 0u);
  EXPECT_EQ(st.slabs, 0u);
  EXPECT_EQ(st.bytes_upstream, up.live_bytes());
  EXPECT_GE(st.bytes_upstream, 33u);

  void* aligned = p.allocate(16, 64);  // small but more aligned than a slot: upstream
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(aligned) % 64, 0u);
  void* huge_align = p.allocate(8, 4096);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(huge_align) % 4096, 0u);
  std::memset(huge_align, 2, 8);
  EXPECT_EQ(p.stats().oversize_allocations, 3u);
  void* slot = p.allocate(32, 8);
  EXPECT_EQ(p.stats().slots_in_use, 1u);
  EXPECT_EQ(p.stats().bytes_upstream, up.live_bytes());

  p.deallocate(aligned, 16, 64);
  p.deallocate(big, 33, 8);
  EXPECT_EQ(p.stats().oversize_allocations, 1u);
  p.deallocate(huge_align, 8, 4096);
  p.deallocate(slot, 32, 8);
  st = p.stats();
  EXPECT_EQ(st.oversize_allocations, 0u);
  EXPECT_EQ(st.bytes_upstream, p.slab_bytes());
  EXPECT_EQ(up.live_bytes(), p.slab_bytes());
}

TEST(Pool, OversizeThrowsWhatUpstreamThrows) {
  lowalloc::pool p(32);
  EXPECT_THROW(static_cast<void>(p.allocate(static_cast<std::size_t>(-1) - 8)), std::bad_alloc);
  EXPECT_EQ(p.stats().oversize_allocations, 0u);
}

TEST(Pool, ReleaseGivesEverythingBack) {
  counting_resource up;
  lowalloc::pool p(24, 8, {}, &up);
  for (int i = 0; i < 3000; ++i) static_cast<void>(p.allocate(24, 8));
  static_cast<void>(p.allocate(1000, 8));
  EXPECT_GT(up.live_blocks(), 2u);
  p.release();
  const lowalloc::pool_stats st = p.stats();
  EXPECT_EQ(st.slots_in_use, 0u);
  EXPECT_EQ(st.slabs, 0u);
  EXPECT_EQ(st.bytes_upstream, 0u);
  EXPECT_EQ(st.oversize_allocations, 0u);
  EXPECT_EQ(up.live_blocks(), 0u);
  // Still usable.
  void* q = p.allocate(24, 8);
  EXPECT_EQ(p.stats().slots_in_use, 1u);
  p.deallocate(q, 24, 8);
}

TEST(Pool, DestructorGivesEverythingBack) {
  counting_resource up;
  {
    lowalloc::pool p(24, 8, {}, &up);
    for (int i = 0; i < 3000; ++i) static_cast<void>(p.allocate(24, 8));
    static_cast<void>(p.allocate(1000, 8));
    static_cast<void>(p.allocate(100, 128));
  }
  EXPECT_EQ(up.live_blocks(), 0u);
}

TEST(Pool, MemoryResourceFace) {
  counting_resource up;
  lowalloc::pool p(64, 16, {}, &up);
  lowalloc::pool other(64);
  std::pmr::memory_resource* r = &p;
  EXPECT_TRUE(r->is_equal(p));
  EXPECT_FALSE(r->is_equal(other));
  void* a = r->allocate(40);
  void* b = r->allocate(200);
  EXPECT_EQ(p.stats().slots_in_use, 1u);
  EXPECT_EQ(p.stats().oversize_allocations, 1u);
  r->deallocate(a, 40);
  r->deallocate(b, 200);
  EXPECT_EQ(p.stats().slots_in_use, 0u);
  EXPECT_EQ(p.stats().oversize_allocations, 0u);
}

TEST(Pool, AllocationCounts) {
  // With operator new as upstream: one allocation per slab, none per slot.
  lowalloc::pool p(16, 16, {64, 1, 0});
  void* first = nullptr;
  LOWALLOC_EXPECT_ALLOCATIONS(1, first = p.allocate(16));
  std::vector<void*> ps;
  ps.reserve(200);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(for (int i = 0; i < 63; ++i) ps.push_back(p.allocate(16)));
  LOWALLOC_EXPECT_ALLOCATIONS(1, ps.push_back(p.allocate(16)));  // the second slab
  lowalloc::alloc_counter scope;
  for (void* q : ps) p.deallocate(q, 16);
  p.deallocate(first, 16);
  EXPECT_EQ(scope.allocations(), 0u);
  EXPECT_EQ(scope.deallocations(), 1u) << "one empty slab kept, the other given back";
  LOWALLOC_EXPECT_NO_ALLOCATIONS(for (int i = 0; i < 1000; ++i) p.deallocate(p.allocate(8), 8));
}

// ---- the recycle list (pool_options::recycled_slots)
#if !LOWALLOC_POOL_POISON

TEST(PoolRecycling, FreedSlotsAreReusedNewestFirst) {
  counting_resource up;
  lowalloc::pool p(32, 16, {}, &up);
  EXPECT_EQ(p.recycled(), 0u);
  void* a = p.allocate(32);
  void* b = p.allocate(32);
  void* c = p.allocate(32);
  p.deallocate(a, 32);
  p.deallocate(c, 32);
  EXPECT_EQ(p.recycled(), 2u);
  EXPECT_EQ(p.stats().slots_in_use, 1u) << "slots on the list are free for the user";
  EXPECT_EQ(p.allocate(32), c);
  EXPECT_EQ(p.recycled(), 1u);
  EXPECT_EQ(p.allocate(32), a);
  EXPECT_EQ(p.recycled(), 0u);
  EXPECT_EQ(p.stats().slots_in_use, 3u);
  for (void* q : {a, b, c}) p.deallocate(q, 32);
  EXPECT_EQ(p.stats().slots_in_use, 0u);
  EXPECT_EQ(up.allocations(), 1u);
}

TEST(PoolRecycling, AFullListGivesItsNewestHalfToTheBitmaps) {
  counting_resource up;
  lowalloc::pool p(16, 16, {64, 1, 8}, &up);
  std::vector<void*> ps;
  for (int i = 0; i < 20; ++i) ps.push_back(p.allocate(16));
  for (int i = 0; i < 8; ++i) {
    p.deallocate(ps[static_cast<std::size_t>(i)], 16);
    EXPECT_EQ(p.recycled(), static_cast<std::size_t>(i) + 1);
  }
  // Full: the 4 newest (ps[7]..ps[4]) go back to the bitmaps, then ps[8] goes on top.
  p.deallocate(ps[8], 16);
  EXPECT_EQ(p.recycled(), 5u);
  EXPECT_EQ(p.stats().slots_in_use, 11u);
  EXPECT_EQ(p.allocate(16), ps[8]);
  for (int i = 3; i >= 0; --i) EXPECT_EQ(p.allocate(16), ps[static_cast<std::size_t>(i)]);
  EXPECT_EQ(p.recycled(), 0u);
  // The flushed ones come from the bitmap of the current group: lowest address first.
  std::vector<void*> again;
  for (int i = 0; i < 4; ++i) again.push_back(p.allocate(16));
  std::sort(again.begin(), again.end());
  std::vector<void*> flushed(ps.begin() + 4, ps.begin() + 8);
  std::sort(flushed.begin(), flushed.end());
  EXPECT_EQ(again, flushed);
  EXPECT_EQ(up.allocations(), 1u);
}

TEST(PoolRecycling, TheListNeverExceedsItsLimit) {
  for (std::size_t limit : {std::size_t{1}, std::size_t{2}, std::size_t{5}, std::size_t{64}}) {
    counting_resource up;
    lowalloc::pool p(24, 8, {64, 1, limit}, &up);
    std::vector<void*> ps;
    for (int i = 0; i < 300; ++i) ps.push_back(p.allocate(24, 8));
    for (std::size_t i = 0; i < ps.size(); ++i) {
      p.deallocate(ps[i], 24, 8);
      ASSERT_LE(p.recycled(), limit) << "limit " << limit;
      ASSERT_EQ(p.stats().slots_in_use, ps.size() - i - 1);
    }
    EXPECT_GT(p.recycled(), 0u);
  }
}

TEST(PoolRecycling, TrimGivesEmptySlabsBack) {
  counting_resource up;
  lowalloc::pool p(32, 16, {64, 1}, &up);  // a list of up to 64 slots, one slab's worth
  EXPECT_EQ(p.stats().slabs, 0u);
  std::vector<void*> ps;
  for (int i = 0; i < 64 * 4; ++i) ps.push_back(p.allocate(32));
  EXPECT_EQ(up.live_blocks(), 4u);
  for (void* q : ps) p.deallocate(q, 32);
  EXPECT_EQ(p.stats().slots_in_use, 0u);
  EXPECT_GT(p.recycled(), 0u);
  EXPECT_LE(p.recycled(), 64u);
  EXPECT_GT(up.live_blocks(), 1u) << "slots on the list hold their slabs";
  p.trim();
  EXPECT_EQ(p.recycled(), 0u);
  EXPECT_EQ(p.stats().slabs, 1u);
  EXPECT_EQ(up.live_blocks(), 1u) << "one empty slab kept";
  p.trim();  // nothing left to do
  EXPECT_EQ(up.live_blocks(), 1u);
}

TEST(PoolRecycling, ReleaseEmptiesTheList) {
  counting_resource up;
  lowalloc::pool p(32, 16, {}, &up);
  void* a = p.allocate(32);
  p.deallocate(a, 32);
  EXPECT_EQ(p.recycled(), 1u);
  p.release();
  EXPECT_EQ(p.recycled(), 0u);
  EXPECT_EQ(up.live_blocks(), 0u);
  void* b = p.allocate(32);  // from a new slab, not the released one's list
  EXPECT_EQ(up.live_blocks(), 1u);
  EXPECT_TRUE(up.block_of(b, 32).first != nullptr);
  p.deallocate(b, 32);
}

TEST(PoolRecycling, OffForZeroAndForSlotsSmallerThanTwoPointers) {
  lowalloc::pool off(32, 16, {64, 1, 0});
  lowalloc::pool small(8, 8);
  for (lowalloc::pool* p : {&off, &small}) {
    void* a = p->allocate(8, 8);
    p->deallocate(a, 8, 8);
    EXPECT_EQ(p->recycled(), 0u);
  }
}

TEST(PoolRecycling, NoAllocationWhileSlotsCycleThroughTheList) {
  lowalloc::pool p(16, 16, {64, 1});
  void* a = p.allocate(16);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(for (int i = 0; i < 1000; ++i) p.deallocate(p.allocate(8), 8));
  lowalloc::alloc_counter scope;
  p.deallocate(a, 16);
  p.trim();
  EXPECT_EQ(scope.deallocations(), 0u) << "the only slab is the kept empty one";
  p.release();
  EXPECT_EQ(scope.deallocations(), 1u);
}

#else

TEST(PoolRecycling, OffUnderAddressSanitizer) {
  lowalloc::pool p(32);
  void* a = p.allocate(32);
  p.deallocate(a, 32);
  EXPECT_EQ(p.recycled(), 0u) << "every free slot stays poisoned";
}

#endif

TEST(PoolAllocator, Traits) {
  using A = lowalloc::pool_allocator<int>;
  using traits = std::allocator_traits<A>;
  static_assert(std::is_same_v<traits::value_type, int>);
  static_assert(std::is_same_v<traits::rebind_alloc<double>, lowalloc::pool_allocator<double>>);
  static_assert(std::is_same_v<A::rebind<long>::other, lowalloc::pool_allocator<long>>);
  static_assert(traits::propagate_on_container_copy_assignment::value);
  static_assert(traits::propagate_on_container_move_assignment::value);
  static_assert(traits::propagate_on_container_swap::value);
  static_assert(!traits::is_always_equal::value);
  static_assert(std::is_nothrow_copy_constructible_v<A>);
  static_assert(std::is_convertible_v<lowalloc::pool&, A>, "implicit from a pool");
  static_assert(!std::is_default_constructible_v<A>);
  using S = lowalloc::pool_allocator<int, lowalloc::synchronized_pool>;
  static_assert(std::is_convertible_v<lowalloc::synchronized_pool&, S>);
  static_assert(!std::is_convertible_v<lowalloc::pool&, S>);

  lowalloc::pool p1(32);
  lowalloc::pool p2(32);
  A a1(p1);
  A a2(p2);
  lowalloc::pool_allocator<double> d1(a1);
  EXPECT_EQ(&d1.pool(), &p1);
  EXPECT_TRUE(a1 == d1);
  EXPECT_FALSE(a1 != d1);
  EXPECT_TRUE(a1 != a2);
  A copy = a2;
  EXPECT_TRUE(copy == a2);
  EXPECT_TRUE(traits::select_on_container_copy_construction(a1) == a1);
}

TEST(PoolAllocator, SlotsAndOversize) {
  counting_resource up;
  lowalloc::pool p(32, 16, {}, &up);
  lowalloc::pool_allocator<std::uint64_t> a(p);
  std::uint64_t* four = a.allocate(4);  // 32 bytes: a slot
  EXPECT_EQ(p.stats().slots_in_use, 1u);
  std::uint64_t* five = a.allocate(5);  // 40 bytes: upstream
  EXPECT_EQ(p.stats().oversize_allocations, 1u);
  five[4] = 1;
  four[3] = 2;
  a.deallocate(five, 5);
  a.deallocate(four, 4);
  EXPECT_EQ(p.stats().slots_in_use, 0u);
  EXPECT_EQ(p.stats().oversize_allocations, 0u);

  struct alignas(64) wide {
    char c[8];
  };
  lowalloc::pool_allocator<wide> w(p);
  wide* x = w.allocate(1);  // more aligned than a slot: upstream
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(x) % 64, 0u);
  EXPECT_EQ(p.stats().oversize_allocations, 1u);
  w.deallocate(x, 1);

  EXPECT_THROW(static_cast<void>(a.allocate(static_cast<std::size_t>(-1) / 4)),
               std::bad_array_new_length);
}

// ---- debug checks
// --------------------------------------------------------------------------------
#if LOWALLOC_ASSERTIONS

TEST(PoolDeathTest, DoubleFree) {
  lowalloc::pool p(16);
  void* a = p.allocate(16);
  void* b = p.allocate(16);
  p.deallocate(a, 16);
  EXPECT_DEATH(p.deallocate(a, 16), "lowalloc::pool: double free of 0x[0-9a-f]+");
  p.deallocate(b, 16);
}

TEST(PoolDeathTest, DoubleFreeOfASlotOnTheRecycleList) {
  lowalloc::pool p(32);  // recycle list on (except under ASan: the bitmap catches it)
  void* a = p.allocate(32);
  p.deallocate(a, 32);
  EXPECT_DEATH(p.deallocate(a, 32), "lowalloc::pool: double free of 0x[0-9a-f]+");
  EXPECT_EQ(p.allocate(32), a);  // the list is intact
  p.deallocate(a, 32);
}

TEST(PoolDeathTest, ForeignPointer) {
  lowalloc::pool p(16);
  lowalloc::pool other(16);
  void* mine = p.allocate(16);
  void* theirs = other.allocate(16);
  int on_stack = 0;
  EXPECT_DEATH(p.deallocate(theirs, 16),
               "lowalloc::pool: pointer 0x[0-9a-f]+ was not allocated by this pool");
  EXPECT_DEATH(p.deallocate(&on_stack, sizeof on_stack),
               "lowalloc::pool: pointer 0x[0-9a-f]+ was not allocated by this pool");
  auto heap = std::make_unique<char[]>(16);
  EXPECT_DEATH(p.deallocate(heap.get(), 16), "was not allocated by this pool");
  // Inside one of our slots, but not its start.
  EXPECT_DEATH(p.deallocate(static_cast<char*>(mine) + 8, 8), "was not allocated by this pool");
  // An oversize block that is not ours.
  EXPECT_DEATH(p.deallocate(heap.get(), 1000), "was not allocated by this pool");
  p.deallocate(mine, 16);
  other.deallocate(theirs, 16);
}

TEST(PoolDeathTest, SynchronizedDoubleFree) {
  lowalloc::synchronized_pool p(16);
  void* a = p.allocate(16);
  void* b = p.allocate(16);
  p.deallocate(a, 16);  // into this thread's cache
  EXPECT_DEATH(p.deallocate(a, 16), "lowalloc::synchronized_pool: double free of 0x[0-9a-f]+");
  // After the slot went back to the central pool (the cache spilled).
  std::vector<void*> many;
  for (int i = 0; i < 300; ++i) many.push_back(p.allocate(16));
  for (void* q : many) p.deallocate(q, 16);
  EXPECT_DEATH(p.deallocate(many.front(), 16), "lowalloc::synchronized_pool: double free of");
  p.deallocate(b, 16);
}

TEST(PoolDeathTest, SynchronizedForeignPointer) {
  lowalloc::synchronized_pool p(16);
  lowalloc::pool other(16);
  void* theirs = other.allocate(16);
  void* mine = p.allocate(16);
  EXPECT_DEATH(p.deallocate(theirs, 16),
               "lowalloc::synchronized_pool: pointer 0x[0-9a-f]+ was not allocated by this pool");
  long on_stack = 0;
  EXPECT_DEATH(p.deallocate(&on_stack, 8), "was not allocated by this pool");
  p.deallocate(mine, 16);
  other.deallocate(theirs, 16);
}

#endif  // LOWALLOC_ASSERTIONS

#if LOWALLOC_POOL_POISON  // AddressSanitizer: free slots and the bytes past a request are poisoned

template <class Pool>
void use_after_free_is_reported() {
  Pool p(32);
  auto* q = static_cast<volatile char*>(p.allocate(32));
  q[31] = 1;
  p.deallocate(const_cast<char*>(q), 32);
  EXPECT_DEATH(static_cast<void>(q[0]), "use-after-poison");
  auto* r = static_cast<volatile char*>(p.allocate(10));
  r[9] = 1;
  EXPECT_DEATH(r[12] = 1, "use-after-poison");
  p.deallocate(const_cast<char*>(r), 10);
}

TEST(PoolDeathTest, UseAfterFreeIsReported) { use_after_free_is_reported<lowalloc::pool>(); }

TEST(PoolDeathTest, SynchronizedUseAfterFreeIsReported) {
  use_after_free_is_reported<lowalloc::synchronized_pool>();
}

#endif  // LOWALLOC_POOL_POISON

TEST(SynchronizedPool, TrimGivesThisThreadsCacheBack) {
  counting_resource up;
  lowalloc::synchronized_pool p(32, 16, {64, 1}, &up);
  p.trim();  // no cache on this thread yet: nothing to do
  EXPECT_EQ(up.allocations(), 0u);
  std::vector<void*> ps;
  for (int i = 0; i < 64 * 4; ++i) ps.push_back(p.allocate(32));
  for (void* q : ps) p.deallocate(q, 32);
  EXPECT_EQ(p.stats().slots_in_use, 0u);
  EXPECT_GT(up.live_blocks(), 1u) << "slots in this thread's cache hold their slabs";
  // Another thread's trim() leaves this thread's cache alone.
  std::thread([&p] { p.trim(); }).join();
  EXPECT_GT(up.live_blocks(), 1u);
  p.trim();
  EXPECT_EQ(p.stats().slabs, 1u);
  EXPECT_EQ(up.live_blocks(), 1u) << "only the kept empty slab";
  void* again = p.allocate(32);  // the cache refills from the central pool
  EXPECT_EQ(p.stats().slots_in_use, 1u);
  p.deallocate(again, 32);
}

TEST(SynchronizedPool, RandomChurnSingleThread) {
  counting_resource up;
  {
    lowalloc::synchronized_pool p(40, 8, {64, 1}, &up);
    std::map<void*, std::size_t> live;
    std::mt19937 rng(99);
    for (int step = 0; step < 20000; ++step) {
      const bool grow = (step / 2500) % 2 == 0;
      if (live.empty() || (rng() % 100 < (grow ? 65u : 35u))) {
        const std::size_t n = 1 + rng() % 40;
        void* q = p.allocate(n, 8);
        ASSERT_EQ(reinterpret_cast<std::uintptr_t>(q) % 8, 0u);
        ASSERT_TRUE(live.emplace(q, n).second) << "pointer handed out twice";
        ASSERT_NE(up.block_of(q, 40).first, nullptr);
      } else {
        auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
        p.deallocate(it->first, it->second, 8);
        live.erase(it);
      }
      const lowalloc::pool_stats st = p.stats();
      ASSERT_EQ(st.slots_in_use, live.size());
      ASSERT_EQ(st.slabs, up.live_blocks());
      ASSERT_EQ(st.bytes_upstream, up.live_bytes());
    }
    for (const auto& kv : live) p.deallocate(kv.first, kv.second, 8);
    EXPECT_EQ(p.stats().slots_in_use, 0u);
  }
  EXPECT_EQ(up.live_blocks(), 0u);
}

}  // namespace
