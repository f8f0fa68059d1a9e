// Standard containers on lowalloc::pool and lowalloc::synchronized_pool: through pool_allocator
// (node containers never say their node size) and as a std::pmr::memory_resource. The same random
// operations run on a std container with std::allocator, compared after every step.
#include <lowalloc/alloc_count.hpp>
#include <lowalloc/pool.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory_resource>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "pool_test_support.hpp"

namespace {

using pool_test::counting_resource;

template <class Pool>
class PoolContainerTest : public ::testing::Test {
 protected:
  template <class T>
  using alloc = lowalloc::pool_allocator<T, Pool>;

  // Slots of 64 bytes: enough for the nodes of every container below on libstdc++ and libc++.
  PoolContainerTest() : pool_(64, alignof(std::max_align_t), {}, &up_) {}

  void expect_empty() {
    const lowalloc::pool_stats st = pool_.stats();
    EXPECT_EQ(st.slots_in_use, 0u);
    EXPECT_EQ(st.oversize_allocations, 0u);
  }

  counting_resource up_;
  Pool pool_;
};

using pool_types = ::testing::Types<lowalloc::pool, lowalloc::synchronized_pool>;

struct pool_names {
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, lowalloc::pool> ? "pool" : "synchronized_pool";
  }
};
TYPED_TEST_SUITE(PoolContainerTest, pool_types, pool_names);

TYPED_TEST(PoolContainerTest, Map) {
  using A = typename TestFixture::template alloc<std::pair<const int, std::uint64_t>>;
  {
    std::map<int, std::uint64_t, std::less<int>, A> m(this->pool_);
    std::map<int, std::uint64_t> ref;
    std::mt19937 rng(1);
    for (int i = 0; i < 20000; ++i) {
      const int k = static_cast<int>(rng() % 3000);
      if (rng() % 3 == 0) {
        EXPECT_EQ(m.erase(k), ref.erase(k));
      } else {
        m[k] += static_cast<std::uint64_t>(i);
        ref[k] += static_cast<std::uint64_t>(i);
      }
      ASSERT_EQ(m.size(), ref.size());
      if (i % 1000 == 0) {
        ASSERT_TRUE(std::equal(m.begin(), m.end(), ref.begin(), ref.end()));
      }
      ASSERT_EQ(this->pool_.stats().slots_in_use, m.size()) << "one slot per node";
    }
    EXPECT_TRUE(std::equal(m.begin(), m.end(), ref.begin(), ref.end()));
    EXPECT_EQ(this->pool_.stats().oversize_allocations, 0u);

    // Copy, move, swap with another pool (the allocator propagates).
    TypeParam other_pool(64);
    std::map<int, std::uint64_t, std::less<int>, A> m2(other_pool);
    m2[1] = 1;
    m2 = m;  // propagate_on_container_copy_assignment: m2 now uses this->pool_
    EXPECT_EQ(&m2.get_allocator().pool(), &this->pool_);
    EXPECT_EQ(this->pool_.stats().slots_in_use, 2 * m.size());
    std::map<int, std::uint64_t, std::less<int>, A> m3(other_pool);
    m3 = std::move(m2);
    EXPECT_EQ(&m3.get_allocator().pool(), &this->pool_);
    std::map<int, std::uint64_t, std::less<int>, A> m4(other_pool);
    m4[5] = 5;
    swap(m3, m4);
    EXPECT_EQ(&m4.get_allocator().pool(), &this->pool_);
    EXPECT_EQ(&m3.get_allocator().pool(), &other_pool);
    EXPECT_TRUE(std::equal(m4.begin(), m4.end(), ref.begin(), ref.end()));
  }
  this->expect_empty();
}

TYPED_TEST(PoolContainerTest, Set) {
  using A = typename TestFixture::template alloc<long>;
  {
    std::set<long, std::less<long>, A> s(this->pool_);
    std::set<long> ref;
    std::mt19937 rng(2);
    for (int i = 0; i < 20000; ++i) {
      const long k = static_cast<long>(rng() % 5000);
      if (rng() % 2 == 0) {
        EXPECT_EQ(s.insert(k).second, ref.insert(k).second);
      } else {
        EXPECT_EQ(s.erase(k), ref.erase(k));
      }
      ASSERT_EQ(this->pool_.stats().slots_in_use, s.size());
    }
    EXPECT_TRUE(std::equal(s.begin(), s.end(), ref.begin(), ref.end()));
  }
  this->expect_empty();
}

TYPED_TEST(PoolContainerTest, List) {
  using A = typename TestFixture::template alloc<int>;
  {
    std::list<int, A> l(this->pool_);
    std::list<int> ref;
    std::mt19937 rng(3);
    for (int i = 0; i < 20000; ++i) {
      switch (rng() % 4) {
        case 0:
          l.push_back(i);
          ref.push_back(i);
          break;
        case 1:
          l.push_front(i);
          ref.push_front(i);
          break;
        case 2:
          if (!l.empty()) {
            l.pop_front();
            ref.pop_front();
          }
          break;
        default:
          if (!l.empty()) {
            l.pop_back();
            ref.pop_back();
          }
          break;
      }
      ASSERT_EQ(this->pool_.stats().slots_in_use, l.size());
    }
    EXPECT_TRUE(std::equal(l.begin(), l.end(), ref.begin(), ref.end()));
    l.sort();
    ref.sort();
    EXPECT_TRUE(std::equal(l.begin(), l.end(), ref.begin(), ref.end()));
  }
  this->expect_empty();
}

TYPED_TEST(PoolContainerTest, UnorderedMap) {
  using A = typename TestFixture::template alloc<std::pair<const std::uint32_t, int>>;
  {
    std::unordered_map<std::uint32_t, int, std::hash<std::uint32_t>, std::equal_to<std::uint32_t>,
                       A>
        m(this->pool_);
    std::unordered_map<std::uint32_t, int> ref;
    std::mt19937 rng(4);
    for (int i = 0; i < 20000; ++i) {
      const auto k = static_cast<std::uint32_t>(rng() % 4000);
      if (rng() % 3 == 0) {
        EXPECT_EQ(m.erase(k), ref.erase(k));
      } else {
        m[k] = i;
        ref[k] = i;
      }
    }
    ASSERT_EQ(m.size(), ref.size());
    for (const auto& kv : ref) {
      auto it = m.find(kv.first);
      ASSERT_NE(it, m.end());
      EXPECT_EQ(it->second, kv.second);
    }
    // Nodes are slots; the bucket array (larger than a slot) went upstream.
    const lowalloc::pool_stats st = this->pool_.stats();
    EXPECT_EQ(st.slots_in_use, m.size());
    EXPECT_EQ(st.oversize_allocations, 1u) << "the bucket array";
  }
  this->expect_empty();
}

TYPED_TEST(PoolContainerTest, VectorGoesUpstreamWhenLarge) {
  using A = typename TestFixture::template alloc<int>;
  {
    std::vector<int, A> v(this->pool_);
    for (int i = 0; i < 1000; ++i) v.push_back(i);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(v[static_cast<std::size_t>(i)], i);
    const lowalloc::pool_stats st = this->pool_.stats();
    EXPECT_EQ(st.slots_in_use, 0u) << "the old small buffers went back";
    EXPECT_EQ(st.oversize_allocations, 1u);
    std::vector<int, A> small(this->pool_);
    small.reserve(16);  // 64 bytes: a slot
    EXPECT_EQ(this->pool_.stats().slots_in_use, 1u);
  }
  this->expect_empty();
}

TYPED_TEST(PoolContainerTest, PmrContainers) {
  {
    std::pmr::list<std::pmr::string> l(&this->pool_);
    std::list<std::string> ref;
    for (int i = 0; i < 2000; ++i) {
      std::string s(static_cast<std::size_t>(i % 80), static_cast<char>('a' + i % 26));
      l.emplace_back(s);  // uses the list's allocator: strings up to 63 chars are slots
      ref.push_back(s);
    }
    EXPECT_TRUE(std::equal(l.begin(), l.end(), ref.begin(), ref.end(),
                           [](const std::pmr::string& a, const std::string& b) {
                             return std::string_view(a) == std::string_view(b);
                           }));
    EXPECT_GT(this->pool_.stats().oversize_allocations, 0u) << "strings of 64+ chars";
    std::pmr::map<int, std::pmr::string> m(&this->pool_);
    for (int i = 0; i < 500; ++i) m.emplace(i, "a string too long for the SSO buffer");
    EXPECT_EQ(m.size(), 500u);
    std::pmr::vector<int> v(&this->pool_);
    v.assign(100, 7);
    std::pmr::unordered_map<int, int> um(&this->pool_);
    for (int i = 0; i < 300; ++i) um[i] = i;
    EXPECT_EQ(um.size(), 300u);
  }
  this->expect_empty();
}

TYPED_TEST(PoolContainerTest, NodeContainersDoNotAllocateAfterWarmUp) {
  using A = typename TestFixture::template alloc<std::pair<const int, int>>;
  TypeParam p(64);  // upstream: operator new, counted by alloc_count
  std::map<int, int, std::less<int>, A> m(p);
  for (int i = 0; i < 100; ++i) m[i] = i;  // one slab, and the thread's cache
  m.clear();
  LOWALLOC_EXPECT_NO_ALLOCATIONS(for (int i = 0; i < 100; ++i) m[i] = i);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(m.clear());
  std::list<int, typename TestFixture::template alloc<int>> l(p);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(for (int i = 0; i < 100; ++i) l.push_back(i));
}

TYPED_TEST(PoolContainerTest, ListOfManyNodesReturnsSlabs) {
  using A = typename TestFixture::template alloc<int>;
  {
    std::list<int, A> l(this->pool_);
    for (int i = 0; i < 100000; ++i) l.push_back(i);
    EXPECT_GE(this->pool_.stats().slabs, 100000 / this->pool_.slots_per_slab());
  }
  this->expect_empty();
  // Slabs emptied by the list went back upstream, but for the kept one and those holding a
  // freed slot still on the pool's recycle list or in this thread's cache. The list freed its
  // nodes in order, so those k slots are consecutive: at most ceil(k / per slab) + 1 slabs.
  const std::size_t per = this->pool_.slots_per_slab();
  std::size_t k = 0;
  if constexpr (std::is_same_v<TypeParam, lowalloc::pool>) {
    k = this->pool_.recycled();
    EXPECT_LE(k, per);
  } else {
    k = this->pool_.thread_cache_capacity();
  }
  EXPECT_LE(this->pool_.stats().slabs, 1 + (k + per - 1) / per + 1);
  EXPECT_EQ(this->pool_.stats().bytes_upstream, this->up_.live_bytes());
  // trim() puts those slots back in their slabs: only the kept empty slab is left.
  this->pool_.trim();
  EXPECT_EQ(this->pool_.stats().slabs, 1u);
  EXPECT_EQ(this->up_.live_blocks(), 1u);
  EXPECT_EQ(this->pool_.stats().bytes_upstream, this->up_.live_bytes());
}

}  // namespace
