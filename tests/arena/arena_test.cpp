// arena: allocation patterns checked against a model at every inline size (typed over N), stats,
// release/reset, chunk growth, a failing upstream, overflow, the three faces with standard and
// std::pmr containers, allocation counts, the documented pitfalls and, under ASan, poisoning.
#include <lowalloc/alloc_count.hpp>
#include <lowalloc/arena.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <list>
#include <map>
#include <memory_resource>
#include <new>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "arena_support.hpp"

namespace {

using lowalloc::arena;
using lowalloc::arena_allocator;
using lowalloc::arena_base;
using lowalloc_test::recording_resource;

constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();

// ---- types -------------------------------------------------------------------------------------

static_assert(std::is_base_of_v<std::pmr::memory_resource, arena_base>);
static_assert(std::is_base_of_v<arena_base, arena<0>>);
static_assert(std::is_base_of_v<arena_base, arena<4096>>);
static_assert(!std::is_copy_constructible_v<arena<16>>);
static_assert(!std::is_move_constructible_v<arena<16>>);
static_assert(!std::is_copy_assignable_v<arena<16>>);
static_assert(!std::is_constructible_v<arena_base>);
static_assert(std::is_nothrow_default_constructible_v<arena<64>>);
// The inline buffer is all an arena adds to its base (N = 0 adds nothing).
static_assert(sizeof(arena<0>) == sizeof(arena_base));
static_assert(sizeof(arena<4096>) <= sizeof(arena_base) + 4096 + alignof(std::max_align_t));
static_assert(alignof(arena<16>) == alignof(std::max_align_t));

static_assert(std::is_nothrow_copy_constructible_v<arena_allocator<int>>);
static_assert(!std::is_default_constructible_v<arena_allocator<int>>);
static_assert(std::is_convertible_v<arena<8>&, arena_allocator<int>>);  // implicit on purpose
static_assert(std::is_same_v<std::allocator_traits<arena_allocator<int>>::rebind_alloc<long>,
                             arena_allocator<long>>);
static_assert(sizeof(arena_allocator<int>) == sizeof(void*));

// ---- the model ---------------------------------------------------------------------------------

// Checks each block an arena hands out: non-null, aligned, inside the arena object (the inline
// buffer) or inside a chunk upstream handed out, disjoint from every other live block, and the
// stats after it. Fills each block with a tag and checks later that no tag was overwritten.
class arena_model {
 public:
  arena_model(arena_base& a, const void* object, std::size_t object_size,
              const recording_resource& up)
      : a_(a),
        object_(reinterpret_cast<std::uintptr_t>(object)),
        object_size_(object_size),
        up_(up) {}

  ::testing::AssertionResult allocate(std::size_t bytes, std::size_t align, void** out = nullptr) {
    void* p = a_.allocate(bytes, align);
    if (out != nullptr) *out = p;
    return record(p, bytes, align);
  }

  ::testing::AssertionResult record(void* p, std::size_t bytes, std::size_t align) {
    ++count_;
    const auto x = reinterpret_cast<std::uintptr_t>(p);
    if (p == nullptr) return ::testing::AssertionFailure() << "null for " << bytes;
    if (x % align != 0) {
      return ::testing::AssertionFailure() << p << " not aligned to " << align;
    }
    const bool in_object = x >= object_ && x + bytes <= object_ + object_size_;
    if (!in_object && !up_.contains(p, bytes)) {
      return ::testing::AssertionFailure()
             << "block " << p << " + " << bytes << " is neither inline nor in a chunk";
    }
    if (in_object) ++inline_blocks_;
    if (bytes > 0) {
      if (!a_.owns(p)) return ::testing::AssertionFailure() << "owns(" << p << ") is false";
      auto next = blocks_.lower_bound(x);
      if (next != blocks_.end() && next->first < x + bytes) {
        return ::testing::AssertionFailure() << "block " << p << " overlaps a later one";
      }
      if (next != blocks_.begin() && std::prev(next)->second.end > x) {
        return ::testing::AssertionFailure() << "block " << p << " overlaps an earlier one";
      }
      const auto tag = static_cast<unsigned char>(count_ % 251 + 1);
      blocks_.emplace(x, block{x + bytes, tag});
      std::memset(p, tag, bytes);
    }
    expected_allocated_ += lowalloc::detail::arena_step(bytes);  // rounded to the granule
    return stats_match();
  }

  ::testing::AssertionResult stats_match() const {
    const lowalloc::arena_stats s = a_.stats();
    if (s.bytes_allocated != expected_allocated_) {
      return ::testing::AssertionFailure()
             << "bytes_allocated " << s.bytes_allocated << ", expected " << expected_allocated_;
    }
    if (s.bytes_upstream != up_.live_bytes()) {
      return ::testing::AssertionFailure()
             << "bytes_upstream " << s.bytes_upstream << ", upstream holds " << up_.live_bytes();
    }
    if (s.chunks != up_.live().size()) {
      return ::testing::AssertionFailure()
             << "chunks " << s.chunks << ", upstream holds " << up_.live().size();
    }
    return ::testing::AssertionSuccess();
  }

  ::testing::AssertionResult contents_intact() const {
    for (const auto& [begin, b] : blocks_) {
      for (std::uintptr_t x = begin; x != b.end; ++x) {
        if (*reinterpret_cast<const unsigned char*>(x) != b.tag) {
          return ::testing::AssertionFailure() << "byte " << x << " of a block was overwritten";
        }
      }
    }
    return ::testing::AssertionSuccess();
  }

  // After release() or reset(): nothing is live any more.
  void forget() {
    blocks_.clear();
    expected_allocated_ = 0;
    inline_blocks_ = 0;
  }

  std::size_t inline_blocks() const noexcept { return inline_blocks_; }

 private:
  struct block {
    std::uintptr_t end;
    unsigned char tag;
  };
  arena_base& a_;
  std::uintptr_t object_;
  std::size_t object_size_;
  const recording_resource& up_;
  std::map<std::uintptr_t, block> blocks_;
  std::size_t expected_allocated_ = 0;
  std::size_t count_ = 0;
  std::size_t inline_blocks_ = 0;
};

// ---- typed tests over N ------------------------------------------------------------------------

template <std::size_t N>
struct inline_n {
  static constexpr std::size_t value = N;
};

template <class P>
class ArenaN : public ::testing::Test {
 protected:
  static constexpr std::size_t kN = P::value;
  using arena_t = arena<kN>;
};
using Ns = ::testing::Types<inline_n<0>, inline_n<16>, inline_n<256>, inline_n<4096>>;
struct n_name {
  template <class P>
  static std::string GetName(int) {
    return "N" + std::to_string(P::value);
  }
};
TYPED_TEST_SUITE(ArenaN, Ns, n_name);

// A size-erased function: any N.
void* grab(arena_base& a, std::size_t bytes) { return a.allocate(bytes, 8); }

constexpr std::array<std::size_t, 5> kSmallAligns = {1, 2, 4, 8, 16};
constexpr std::array<std::size_t, 13> kAllAligns = {1,   2,   4,   8,    16,   32,  64,
                                                    128, 256, 512, 1024, 2048, 4096};

TYPED_TEST(ArenaN, ConstructionAllocatesNothing) {
  constexpr std::size_t N = TestFixture::kN;
  lowalloc::alloc_counter scope;
  {
    typename TestFixture::arena_t a;
    EXPECT_EQ(a.upstream(), std::pmr::get_default_resource());
    EXPECT_EQ(a.inline_capacity(), N);
    EXPECT_EQ(a.remaining(), N);
    EXPECT_EQ(a.stats().bytes_allocated, 0u);
    EXPECT_EQ(a.stats().bytes_upstream, 0u);
    EXPECT_EQ(a.stats().chunks, 0u);
    EXPECT_EQ(a.next_chunk_size(), TestFixture::arena_t::default_first_chunk_size);
  }
  EXPECT_EQ(scope.allocations(), 0u);
  recording_resource up;
  typename TestFixture::arena_t b(&up);
  EXPECT_EQ(b.upstream(), &up);
}

TYPED_TEST(ArenaN, SingleAllocation) {
  constexpr std::size_t N = TestFixture::kN;
  recording_resource up;
  typename TestFixture::arena_t a(&up);
  arena_model m(a, &a, sizeof(a), up);
  void* p = nullptr;
  ASSERT_TRUE(m.allocate(8, 8, &p));
  // Fits inline when N leaves room for it (and, under ASan, its redzone).
  EXPECT_EQ(up.allocations(), N >= 8 + lowalloc::detail::arena_redzone ? 0u : 1u);
  EXPECT_EQ(a.stats().bytes_allocated, 16u);  // rounded up to alignof(std::max_align_t)
  EXPECT_TRUE(m.contents_intact());
}

TYPED_TEST(ArenaN, ZeroByteRequestsGetNonNullPointers) {
  recording_resource up;
  typename TestFixture::arena_t a(&up);
  arena_model m(a, &a, sizeof(a), up);
  for (std::size_t align : kSmallAligns) ASSERT_TRUE(m.allocate(0, align));
  // Nothing needed a chunk (under ASan each block, even empty, is followed by a redzone).
  if (lowalloc::detail::arena_redzone == 0) {
    EXPECT_EQ(up.allocations(), 0u);
  }
  EXPECT_EQ(a.stats().bytes_allocated, 0u);
}

TYPED_TEST(ArenaN, BulkSmallAllocationsMatchTheModel) {
  recording_resource up;
  typename TestFixture::arena_t a(&up);
  arena_model m(a, &a, sizeof(a), up);
  std::mt19937 rng(42);
  std::uniform_int_distribution<std::size_t> size(1, 64);
  std::uniform_int_distribution<std::size_t> align_index(0, kSmallAligns.size() - 1);
  for (int i = 0; i < 3000; ++i) {
    ASSERT_TRUE(m.allocate(size(rng), kSmallAligns[align_index(rng)])) << "step " << i;
  }
  EXPECT_TRUE(m.contents_intact());
  EXPECT_GT(up.allocations(), 1u);
  if (TestFixture::kN >= 256) {
    EXPECT_GT(m.inline_blocks(), 0u);
  }
  EXPECT_EQ(up.bad_deallocations, 0u);
}

TYPED_TEST(ArenaN, MixedSizesAndAlignmentsMatchTheModel) {
  recording_resource up;
  typename TestFixture::arena_t a(&up);
  arena_model m(a, &a, sizeof(a), up);
  constexpr std::array<std::size_t, 15> sizes = {0,   1,   3,    7,    8,    15,    16,    17,
                                                 100, 255, 1000, 4095, 5000, 20000, 100000};
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> size_index(0, sizes.size() - 1);
  std::uniform_int_distribution<std::size_t> align_index(0, kAllAligns.size() - 1);
  for (int i = 0; i < 600; ++i) {
    const std::size_t bytes = sizes[size_index(rng)];
    const std::size_t align = kAllAligns[align_index(rng)];
    ASSERT_TRUE(m.allocate(bytes, align)) << "step " << i << ": " << bytes << " @ " << align;
  }
  EXPECT_TRUE(m.contents_intact());
  // Every alignment, one after the other, then once more in reverse.
  for (std::size_t align : kAllAligns) ASSERT_TRUE(m.allocate(3, align));
  for (auto it = kAllAligns.rbegin(); it != kAllAligns.rend(); ++it) {
    ASSERT_TRUE(m.allocate(*it, *it));
  }
  EXPECT_TRUE(m.contents_intact());
}

TYPED_TEST(ArenaN, OverAlignedRequestsInTheInlineBuffer) {
  constexpr std::size_t N = TestFixture::kN;
  recording_resource up;
  typename TestFixture::arena_t a(&up);
  arena_model m(a, &a, sizeof(a), up);
  ASSERT_TRUE(m.allocate(1, 1));
  ASSERT_TRUE(m.allocate(8, 64));  // more than the buffer's own alignment
  ASSERT_TRUE(m.allocate(8, 128));
  if (N >= 256) {
    EXPECT_EQ(m.inline_blocks(), 3u);  // padded inside the buffer, no chunk
    EXPECT_EQ(up.allocations(), 0u);
  }
  // Larger than a chunk's natural alignment: padded inside a chunk.
  void* p = nullptr;
  ASSERT_TRUE(m.allocate(100, 4096, &p));
  ASSERT_TRUE(m.allocate(5000, 8192, &p));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 8192, 0u);
  EXPECT_TRUE(m.contents_intact());
}

TYPED_TEST(ArenaN, ReleaseGivesEverythingBackAndStartsInline) {
  constexpr std::size_t N = TestFixture::kN;
  recording_resource up;
  typename TestFixture::arena_t a(&up);
  arena_model m(a, &a, sizeof(a), up);
  void* first = grab(a, 8);
  ASSERT_TRUE(m.record(first, 8, 8));
  for (int i = 0; i < 500; ++i) ASSERT_TRUE(m.allocate(100, 16));
  ASSERT_GT(a.stats().chunks, 1u);
  const std::size_t grown = a.next_chunk_size();
  EXPECT_GT(grown, TestFixture::arena_t::default_first_chunk_size);

  a.release();
  m.forget();
  EXPECT_TRUE(up.live().empty());
  EXPECT_EQ(up.deallocations(), up.allocations());
  EXPECT_EQ(up.bad_deallocations, 0u);
  EXPECT_EQ(a.stats().bytes_allocated, 0u);
  EXPECT_EQ(a.stats().bytes_upstream, 0u);
  EXPECT_EQ(a.stats().chunks, 0u);
  EXPECT_EQ(a.remaining(), N);
  EXPECT_EQ(a.next_chunk_size(), TestFixture::arena_t::default_first_chunk_size);
  // The same first block again: back at the start of the inline buffer (or of a new chunk).
  void* again = grab(a, 8);
  ASSERT_TRUE(m.record(again, 8, 8));
  if (N >= 8 + lowalloc::detail::arena_redzone) {
    EXPECT_EQ(again, first);
  }
  a.release();
  a.release();  // idempotent
  EXPECT_TRUE(up.live().empty());
}

TYPED_TEST(ArenaN, ResetKeepsTheLargestChunkAndReusesIt) {
  constexpr std::size_t N = TestFixture::kN;
  recording_resource up;
  typename TestFixture::arena_t a(&up);
  arena_model m(a, &a, sizeof(a), up);
  for (int i = 0; i < 500; ++i) ASSERT_TRUE(m.allocate(100, 16));
  ASSERT_GE(up.live().size(), 3u);
  std::size_t largest = 0;
  void* largest_block = nullptr;
  for (const auto& b : up.live()) {
    if (b.bytes > largest) {
      largest = b.bytes;
      largest_block = b.p;
    }
  }
  const std::size_t allocations = up.allocations();
  const std::size_t next = a.next_chunk_size();

  a.reset();
  m.forget();
  ASSERT_EQ(up.live().size(), 1u);
  EXPECT_EQ(up.live().front().p, largest_block);
  EXPECT_EQ(a.stats().chunks, 1u);
  EXPECT_EQ(a.stats().bytes_upstream, largest);
  EXPECT_EQ(a.stats().bytes_allocated, 0u);
  EXPECT_EQ(a.remaining(), N);           // the inline buffer first
  EXPECT_EQ(a.next_chunk_size(), next);  // growth continues
  EXPECT_TRUE(a.owns(static_cast<unsigned char*>(largest_block) + largest - 1));

  // Fill the inline buffer and nearly all of the kept chunk: no new upstream allocation.
  std::size_t taken = 0;
  while (taken + 256 < largest - 64) {
    ASSERT_TRUE(m.allocate(100, 16));
    taken += 100 + 16 + lowalloc::detail::arena_redzone;
  }
  EXPECT_EQ(up.allocations(), allocations) << "the kept chunk was not reused";
  EXPECT_TRUE(up.contains(a.allocate(1, 1), 1));
  EXPECT_TRUE(m.contents_intact());

  // A second reset keeps the same chunk; a request larger than it needs a new one.
  a.reset();
  m.forget();
  ASSERT_EQ(up.live().size(), 1u);
  EXPECT_EQ(up.live().front().p, largest_block);
  ASSERT_TRUE(m.allocate(largest * 2, 16));
  EXPECT_EQ(up.allocations(), allocations + 1);
  EXPECT_EQ(a.stats().chunks, 2u);  // the new one and the kept one, still spare
  a.reset();                        // now the new, larger one is kept
  m.forget();
  ASSERT_EQ(up.live().size(), 1u);
  EXPECT_GE(up.live().front().bytes, largest * 2);
  EXPECT_EQ(up.bad_deallocations, 0u);
}

TYPED_TEST(ArenaN, ResettingEachRoundStopsAllocating) {
  recording_resource up;
  typename TestFixture::arena_t a(&up);
  std::vector<std::size_t> allocations_after_round;
  for (int round = 0; round < 12; ++round) {
    arena_model m(a, &a, sizeof(a), up);
    for (int i = 0; i < 400; ++i) ASSERT_TRUE(m.allocate(100, 8));  // ~40 KiB a round
    EXPECT_TRUE(m.contents_intact());
    a.reset();
    EXPECT_LE(a.stats().chunks, 1u);
    allocations_after_round.push_back(up.allocations());
  }
  // The kept chunk grows until one round fits in it; from then on upstream is never asked.
  EXPECT_EQ(allocations_after_round[6], allocations_after_round.back());
  EXPECT_EQ(up.live().size(), 1u);
  EXPECT_EQ(up.bad_deallocations, 0u);
}

TYPED_TEST(ArenaN, ChunksGrowGeometrically) {
  recording_resource up;
  typename TestFixture::arena_t a(&up);
  while (up.allocations() < 8) (void)a.allocate(64, 8);
  const std::vector<std::size_t>& sizes = up.sizes();
  EXPECT_EQ(sizes[0], TestFixture::arena_t::default_first_chunk_size);
  EXPECT_GE(sizes[0], 1024u);
  EXPECT_GE(sizes[0], 2 * TestFixture::kN);
  for (std::size_t i = 1; i < sizes.size(); ++i) EXPECT_EQ(sizes[i], 2 * sizes[i - 1]) << i;
  EXPECT_EQ(a.next_chunk_size(), 2 * sizes.back());
  for (const auto& b : up.live()) EXPECT_EQ(b.align, alignof(std::max_align_t));
}

TYPED_TEST(ArenaN, ALargeRequestGetsAChunkOfItsOwn) {
  recording_resource up;
  typename TestFixture::arena_t a(&up);
  arena_model m(a, &a, sizeof(a), up);
  while (a.remaining() < 512) ASSERT_TRUE(m.allocate(64, 8));
  const std::size_t before = a.remaining();
  const std::size_t next = a.next_chunk_size();
  const std::size_t allocations = up.allocations();
  constexpr std::size_t big = std::size_t{1} << 20;
  ASSERT_TRUE(m.allocate(big, 16));
  EXPECT_EQ(up.allocations(), allocations + 1);
  EXPECT_GE(up.sizes().back(), big);
  EXPECT_LE(up.sizes().back(), big + 256);  // sized to the request, not to the schedule
  EXPECT_EQ(a.next_chunk_size(), next);     // the schedule is unchanged
  EXPECT_EQ(a.remaining(), before);         // and small requests continue where they were
  ASSERT_TRUE(m.allocate(64, 8));
  EXPECT_EQ(up.allocations(), allocations + 1);
  EXPECT_TRUE(m.contents_intact());
}

TYPED_TEST(ArenaN, AFailingUpstreamLeavesTheArenaUnchanged) {
  recording_resource up;
  typename TestFixture::arena_t a(&up);
  arena_model m(a, &a, sizeof(a), up);
  const auto check_unchanged_after_failure = [&](std::size_t bytes, std::size_t align) {
    const lowalloc::arena_stats before = a.stats();
    const std::size_t remaining = a.remaining();
    const std::size_t next = a.next_chunk_size();
    const std::size_t failures = up.failures();
    up.fail_after(0);
    EXPECT_THROW((void)a.allocate(bytes, align), std::bad_alloc);
    up.fail_after(-1);
    EXPECT_EQ(up.failures(), failures + 1);
    EXPECT_EQ(a.stats().bytes_allocated, before.bytes_allocated);
    EXPECT_EQ(a.stats().bytes_upstream, before.bytes_upstream);
    EXPECT_EQ(a.stats().chunks, before.chunks);
    EXPECT_EQ(a.remaining(), remaining);
    EXPECT_EQ(a.next_chunk_size(), next);
    EXPECT_TRUE(m.stats_match());
  };
  // From the inline buffer: an ordinary chunk, a large one, an over-aligned one.
  check_unchanged_after_failure(a.remaining() + 1, 8);
  check_unchanged_after_failure(std::size_t{1} << 20, 8);
  check_unchanged_after_failure(a.remaining() + 1, 4096);
  EXPECT_EQ(up.allocations(), 0u);
  // What still fits is served from where it would have been.
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(m.allocate(32, 8));
  while (up.allocations() == 0) ASSERT_TRUE(m.allocate(32, 8));
  // From a chunk, and through the pmr face.
  check_unchanged_after_failure(a.remaining() + 1, 16);
  std::pmr::memory_resource& r = a;
  up.fail_after(0);
  EXPECT_THROW((void)r.allocate(a.next_chunk_size(), 8), std::bad_alloc);
  up.fail_after(-1);
  EXPECT_TRUE(m.stats_match());
  // After a reset the kept chunk survives a failed request larger than it.
  a.reset();
  m.forget();
  const std::size_t kept = a.stats().bytes_upstream;
  check_unchanged_after_failure(kept * 4, 16);
  EXPECT_EQ(a.stats().bytes_upstream, kept);
  // And the arena works on.
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(m.allocate(48, 16));
  EXPECT_TRUE(m.contents_intact());
  EXPECT_EQ(up.bad_deallocations, 0u);
}

TYPED_TEST(ArenaN, ContainersThroughArenaAllocator) {
  recording_resource up;
  typename TestFixture::arena_t a(&up);
  {
    std::vector<int, arena_allocator<int>> v(a);
    for (int i = 0; i < 1000; ++i) v.push_back(i);
    std::vector<int> expected(1000);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_TRUE(std::equal(v.begin(), v.end(), expected.begin(), expected.end()));
    EXPECT_TRUE(a.owns(v.data()));
    auto copy = v;  // an allocator copy: the same arena
    EXPECT_EQ(&copy.get_allocator().arena(), static_cast<arena_base*>(&a));
    EXPECT_TRUE(a.owns(copy.data()));

    using map_alloc = arena_allocator<std::pair<const int, std::string>>;
    std::map<int, std::string, std::less<int>, map_alloc> m(a);
    for (int i = 0; i < 300; ++i) m.emplace(i, std::to_string(i));
    EXPECT_EQ(m.size(), 300u);
    EXPECT_EQ(m.at(123), "123");
    EXPECT_TRUE(a.owns(&*m.begin()));

    using umap_alloc = arena_allocator<std::pair<const int, int>>;
    std::unordered_map<int, int, std::hash<int>, std::equal_to<int>, umap_alloc> u(a);
    for (int i = 0; i < 500; ++i) u[i] = 2 * i;
    EXPECT_EQ(u.size(), 500u);
    EXPECT_EQ(u.at(250), 500);
    EXPECT_TRUE(a.owns(&*u.find(7)));

    std::list<int, arena_allocator<int>> l(a);
    for (int i = 0; i < 200; ++i) l.push_front(i);
    EXPECT_EQ(l.front(), 199);
    EXPECT_EQ(l.size(), 200u);
    for (const int& x : l) EXPECT_TRUE(a.owns(&x));
    l.remove_if([](int x) { return x % 2 == 0; });
    EXPECT_EQ(l.size(), 100u);

    struct alignas(64) wide {
      unsigned char bytes[64];
    };
    std::vector<wide, arena_allocator<wide>> w(a);
    for (int i = 0; i < 20; ++i) w.emplace_back();
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w.data()) % 64, 0u);
  }
  EXPECT_GT(a.stats().bytes_allocated, 0u);
  const std::size_t chunks = a.stats().chunks;
  EXPECT_EQ(chunks, up.live().size());
}

TYPED_TEST(ArenaN, PmrContainersWithTheArenaAsResource) {
  recording_resource up;
  typename TestFixture::arena_t a(&up);
  {
    std::pmr::vector<int> v(&a);
    for (int i = 0; i < 1000; ++i) v.push_back(i);
    EXPECT_EQ(v.get_allocator().resource(), &a);
    EXPECT_TRUE(a.owns(v.data()));
    EXPECT_EQ(v[999], 999);

    std::pmr::map<int, std::pmr::string> m(&a);
    for (int i = 0; i < 200; ++i) {
      m.try_emplace(i, "a value long enough to leave the small string buffer " + std::to_string(i));
    }
    EXPECT_EQ(m.at(42).substr(m.at(42).size() - 2), "42");
    EXPECT_EQ(m.at(42).get_allocator().resource(), &a);  // uses-allocator construction
    EXPECT_TRUE(a.owns(m.at(42).data()));

    std::pmr::string s(&a);
    for (int i = 0; i < 100; ++i) s += "abcdefgh";
    EXPECT_EQ(s.size(), 800u);
    EXPECT_TRUE(a.owns(s.data()));

    EXPECT_TRUE(a.is_equal(a));
    EXPECT_FALSE(a.is_equal(up));
  }
  EXPECT_EQ(up.bad_deallocations, 0u);
}

TYPED_TEST(ArenaN, TheThreeFacesShareOneArena) {
  recording_resource up;
  typename TestFixture::arena_t a(&up);
  arena_model m(a, &a, sizeof(a), up);
  std::pmr::memory_resource& r = a;
  arena_allocator<double> alloc(a);
  ASSERT_TRUE(m.record(a.allocate(10, 2), 10, 2));
  ASSERT_TRUE(m.record(r.allocate(24, 8), 24, 8));
  ASSERT_TRUE(m.record(alloc.allocate(3), 3 * sizeof(double), alignof(double)));
  arena_allocator<char> rebound(alloc);
  EXPECT_TRUE(rebound == alloc);
  EXPECT_FALSE(rebound != alloc);
  ASSERT_TRUE(m.record(rebound.allocate(5), 5, 1));
  EXPECT_EQ(a.stats().bytes_allocated, 16u + 32u + 32u + 16u);  // each rounded up to 16
  // Deallocation through any face changes nothing.
  a.deallocate(nullptr, 0);
  EXPECT_EQ(a.stats().bytes_allocated, 96u);
  typename TestFixture::arena_t other(&up);
  EXPECT_FALSE(arena_allocator<int>(other) == alloc);
  EXPECT_TRUE(m.contents_intact());
}

TYPED_TEST(ArenaN, OverflowingRequestsThrowBadAlloc) {
  recording_resource up;
  typename TestFixture::arena_t a(&up);
  (void)a.allocate(8);
  const std::size_t allocations = up.allocations();
  const lowalloc::arena_stats before = a.stats();
  const std::size_t remaining = a.remaining();
  EXPECT_THROW((void)a.allocate(kMax, 1), std::bad_alloc);
  EXPECT_THROW((void)a.allocate(kMax - 8, 16), std::bad_alloc);
  EXPECT_THROW((void)a.allocate(kMax - 100, 4096), std::bad_alloc);
  constexpr std::size_t half = kMax / 2 + 1;  // a power of two
  EXPECT_THROW((void)a.allocate(half, half), std::bad_alloc);
  std::pmr::memory_resource& r = a;
  // Through a volatile: memory_resource::allocate is declared alloc_size(2), and GCC 12 at -O0
  // refuses the constant (-Walloc-size-larger-than).
  volatile std::size_t too_large = kMax - 4;
  EXPECT_THROW((void)r.allocate(too_large, 8), std::bad_alloc);
  arena_allocator<std::uint64_t> alloc(a);
  EXPECT_THROW((void)alloc.allocate(kMax / 4), std::bad_alloc);  // n * 8 overflows
  EXPECT_EQ(up.allocations(), allocations);  // each was refused before asking upstream
  EXPECT_EQ(a.stats().bytes_allocated, before.bytes_allocated);
  EXPECT_EQ(a.stats().chunks, before.chunks);
  EXPECT_EQ(a.remaining(), remaining);
}

TYPED_TEST(ArenaN, DestructionGivesEveryChunkBack) {
  recording_resource up;
  {
    typename TestFixture::arena_t a(&up);
    for (int i = 0; i < 300; ++i) (void)a.allocate(200, 8);
    (void)a.allocate(std::size_t{1} << 16, 64);
    EXPECT_GT(up.live().size(), 2u);
  }
  EXPECT_TRUE(up.live().empty());
  EXPECT_EQ(up.deallocations(), up.allocations());
  EXPECT_EQ(up.bad_deallocations, 0u);
  {
    typename TestFixture::arena_t a(&up);
    for (int i = 0; i < 300; ++i) (void)a.allocate(200, 8);
    a.reset();  // a spare chunk is given back too
  }
  EXPECT_TRUE(up.live().empty());
  EXPECT_EQ(up.bad_deallocations, 0u);
}

TYPED_TEST(ArenaN, AnArenaCanBeTheUpstreamOfAnother) {
  arena<16384> outer(std::pmr::null_memory_resource());
  typename TestFixture::arena_t inner(&outer);
  std::pmr::vector<int> v(&inner);
  for (int i = 0; i < 100; ++i) v.push_back(i);
  EXPECT_TRUE(inner.owns(v.data()));
  if (inner.stats().chunks > 0) {
    EXPECT_TRUE(outer.owns(v.data()));
  }
  EXPECT_EQ(outer.stats().bytes_allocated, inner.stats().bytes_upstream);
}

TYPED_TEST(ArenaN, FirstChunkSizeCanBeChosen) {
  recording_resource up;
  typename TestFixture::arena_t a(&up, 100);
  EXPECT_EQ(a.next_chunk_size(), 112u);  // rounded up to the granule
  while (up.allocations() < 3) (void)a.allocate(16, 8);
  EXPECT_EQ(up.sizes()[0], 112u);
  EXPECT_EQ(up.sizes()[1], 224u);
  EXPECT_EQ(up.sizes()[2], 448u);
}

// ---- allocation counts -------------------------------------------------------------------------

// Builds containers on an arena with enough inline bytes; returns a checksum.
long containers_on_a_big_inline_arena() {
  arena<32768> a(std::pmr::null_memory_resource());  // any chunk would throw
  long sum = 0;
  {
    std::vector<int, arena_allocator<int>> v(a);
    for (int i = 0; i < 200; ++i) v.push_back(i);
    std::list<int, arena_allocator<int>> l(a);
    for (int i = 0; i < 50; ++i) l.push_back(i);
    using map_alloc = arena_allocator<std::pair<const int, int>>;
    std::map<int, int, std::less<int>, map_alloc> m(a);
    for (int i = 0; i < 50; ++i) m.try_emplace(i, i);
    std::unordered_map<int, int, std::hash<int>, std::equal_to<int>, map_alloc> u(a);
    for (int i = 0; i < 50; ++i) u.try_emplace(i, i);
    std::pmr::vector<long> pv(&a);
    for (long i = 0; i < 100; ++i) pv.push_back(i);
    std::pmr::map<int, std::pmr::string> pm(&a);
    for (int i = 0; i < 20; ++i) pm.try_emplace(i, "longer than any small string buffer is");
    std::pmr::string s("a long string, well past the small string optimisation", &a);
    sum = std::accumulate(v.begin(), v.end(), 0L) + std::accumulate(l.begin(), l.end(), 0L) +
          static_cast<long>(m.size() + u.size() + pm.size() + s.size()) +
          std::accumulate(pv.begin(), pv.end(), 0L);
  }
  return a.stats().chunks == 0 ? sum : -1;
}

TEST(ArenaAllocations, ContainersOnEnoughInlineBytesNeverTouchTheHeap) {
  long sum = 0;
  LOWALLOC_EXPECT_NO_ALLOCATIONS(sum = containers_on_a_big_inline_arena());
  EXPECT_EQ(sum, 19900L + 1225L + 50L + 50L + 20L + 54L + 4950L);
}

TEST(ArenaAllocations, ChunksComeFromTheDefaultResourceByDefault) {
  arena<0> a;  // upstream: new_delete_resource, i.e. operator new
  LOWALLOC_EXPECT_ALLOCATIONS(1, (void)a.allocate(8));
  LOWALLOC_EXPECT_NO_ALLOCATIONS(for (int i = 0; i < 10; ++i)(void) a.allocate(8));
  lowalloc::alloc_counter scope;
  a.release();
  EXPECT_EQ(scope.deallocations(), 1u);
}

// ---- documented pitfalls -----------------------------------------------------------------------

TEST(ArenaPitfalls, MapEmplaceOfAnExistingKeyBuildsAndDropsANodeTryEmplaceDoesNot) {
  arena<8192> a;
  std::pmr::map<std::pmr::string, int> m(&a);
  const char* key_text = "a key longer than any small string buffer";
  m.emplace(key_text, 1);
  const std::pmr::string key(key_text, &a);

  std::size_t before = a.stats().bytes_allocated;
  auto [it, inserted] = m.emplace(key_text, 2);  // builds a node (and its key) to compare...
  EXPECT_FALSE(inserted);
  EXPECT_EQ(it->second, 1);
  EXPECT_GT(a.stats().bytes_allocated, before);  // ...drops it: a monotonic arena never reuses it

  before = a.stats().bytes_allocated;
  auto [it2, inserted2] = m.try_emplace(key, 3);  // looks up first: nothing built
  EXPECT_FALSE(inserted2);
  EXPECT_EQ(it2->second, 1);
  EXPECT_EQ(a.stats().bytes_allocated, before);
  EXPECT_EQ(m.size(), 1u);
}

TEST(ArenaPitfalls, CopyingAPmrContainerLeavesTheArena) {
  arena<4096> a;
  std::pmr::vector<int> v({1, 2, 3}, &a);
  ASSERT_EQ(v.get_allocator().resource(), &a);

  std::pmr::vector<int> copy = v;  // select_on_container_copy_construction: the default resource
  EXPECT_EQ(copy.get_allocator().resource(), std::pmr::get_default_resource());
  EXPECT_NE(copy.get_allocator().resource(), &a);
  EXPECT_FALSE(a.owns(copy.data()));

  std::pmr::vector<int> kept(v, &a);  // the fix: name the resource
  EXPECT_EQ(kept.get_allocator().resource(), &a);
  EXPECT_TRUE(a.owns(kept.data()));

  // arena_allocator propagates on copy construction: the copy stays on the arena.
  std::vector<int, arena_allocator<int>> w({1, 2, 3}, a);
  auto wcopy = w;
  EXPECT_EQ(&wcopy.get_allocator().arena(), static_cast<arena_base*>(&a));
  EXPECT_TRUE(a.owns(wcopy.data()));
}

TEST(ArenaPitfalls, AGrowingVectorLeavesItsOldBuffersBehind) {
  arena<0> a;
  std::vector<int, arena_allocator<int>> v(a);
  for (int i = 0; i < 1024; ++i) v.push_back(i);
  // 1 + 2 + 4 + ... + 1024 ints: about twice the final buffer.
  EXPECT_GE(a.stats().bytes_allocated, 2 * 1024 * sizeof(int) - sizeof(int));
  std::vector<int, arena_allocator<int>> r(a);
  r.reserve(1024);  // the fix: reserve once
  const std::size_t before = a.stats().bytes_allocated;
  for (int i = 0; i < 1024; ++i) r.push_back(i);
  EXPECT_EQ(a.stats().bytes_allocated, before);
}

// ---- debug checks and AddressSanitizer ---------------------------------------------------------

#if LOWALLOC_ASSERTIONS && GTEST_HAS_DEATH_TEST
TEST(ArenaDeathTest, AlignmentMustBeAPowerOfTwo) {
  arena<64> a;
  EXPECT_DEATH((void)a.allocate(8, 3), "lowalloc assertion failed");
  EXPECT_DEATH((void)a.allocate(8, 0), "lowalloc assertion failed");
}
#endif

#if LOWALLOC_ARENA_POISON && GTEST_HAS_DEATH_TEST

int read_int(const int* p) { return *static_cast<const volatile int*>(p); }
unsigned char read_byte(const void* p) { return *static_cast<const volatile unsigned char*>(p); }

TEST(ArenaAsanDeathTest, ReadAfterResetIsReported) {
  arena<256> a;
  int* p = static_cast<int*>(a.allocate(sizeof(int), alignof(int)));
  *p = 42;
  EXPECT_EQ(read_int(p), 42);
  a.reset();
  EXPECT_DEATH(read_int(p), "use-after-poison");
}

TEST(ArenaAsanDeathTest, ReadAfterResetInTheKeptChunkIsReported) {
  arena<0> a;
  int* p = static_cast<int*>(a.allocate(sizeof(int), alignof(int)));
  *p = 42;
  a.reset();
  ASSERT_EQ(a.stats().chunks, 1u);  // p's chunk is kept, not freed
  EXPECT_DEATH(read_int(p), "use-after-poison");
}

TEST(ArenaAsanDeathTest, ReadAfterReleaseOfTheInlineBufferIsReported) {
  arena<256> a;
  int* p = static_cast<int*>(a.allocate(sizeof(int), alignof(int)));
  *p = 1;
  a.release();
  EXPECT_DEATH(read_int(p), "use-after-poison");
}

TEST(ArenaAsanDeathTest, MemoryNotHandedOutIsPoisoned) {
  arena<256> a;
  auto* p = static_cast<unsigned char*>(a.allocate(8, 8));
  p[7] = 1;
  EXPECT_DEATH(read_byte(p + 8), "use-after-poison");    // the redzone after the block
  EXPECT_DEATH(read_byte(p + 100), "use-after-poison");  // never handed out
  EXPECT_DEATH(read_byte(p + 200), "use-after-poison");
}

TEST(ArenaAsanDeathTest, UseAfterDeallocateIsReported) {
  arena<256> a;
  std::vector<int, arena_allocator<int>> v(a);
  v.push_back(1);
  const int* old = v.data();
  for (int i = 0; i < 20; ++i) v.push_back(i);  // moved to a larger buffer
  ASSERT_NE(v.data(), old);
  EXPECT_DEATH(read_int(old), "use-after-poison");
}

TEST(ArenaAsan, TheInlineBufferIsUnpoisonedOnDestruction) {
  alignas(arena<256>) unsigned char raw[sizeof(arena<256>)];
  auto* a = ::new (static_cast<void*>(raw)) arena<256>();
  (void)a->allocate(8);
  a->~arena<256>();
  unsigned sum = 0;
  for (unsigned char& c : raw) {
    c = 1;
    sum += read_byte(&c);
  }
  EXPECT_EQ(sum, sizeof(raw));
}

#endif  // LOWALLOC_ARENA_POISON

}  // namespace
