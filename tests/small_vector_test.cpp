// small_vector: behaviour at every inline capacity (typed over N), allocation counts, element
// lifetimes, layout, the size-erased base, relocation, allocators and debug checks.
#include <lowalloc/alloc_count.hpp>
#include <lowalloc/small_vector.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <list>
#include <memory_resource>
#include <numeric>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#if LOWALLOC_HAS_RANGES
#include <concepts>  // std::ranges::swap
#endif

#include "support/element_types.hpp"

namespace {

using lowalloc::small_vector;
using lowalloc::small_vector_base;
using lowalloc_test::counted;
using lowalloc_test::counts;

// ---- layout ------------------------------------------------------------------------------------

static_assert(sizeof(small_vector<int, 8>) == 40);  // absl/folly 40, LLVM 48, boost 56
static_assert(sizeof(small_vector<int, 0>) == 24);
static_assert(sizeof(small_vector<int, 4>) == 24);  // inline ints overlap pointer + capacity
static_assert(sizeof(small_vector<char, 16>) == 24);
static_assert(sizeof(small_vector<std::uint64_t, 2>) == 24);
static_assert(sizeof(small_vector<std::uint64_t, 3>) == 32);
static_assert(sizeof(small_vector<void*, 16>) == 8 + 16 * 8);
static_assert(sizeof(small_vector<lowalloc_test::over_aligned, 1>) == 128);
static_assert(alignof(small_vector<lowalloc_test::over_aligned, 1>) == 64);
static_assert(sizeof(small_vector<int, 8, std::pmr::polymorphic_allocator<int>>) == 48);
// The base's functions serve every N: one type.
static_assert(std::is_base_of_v<small_vector_base<int>, small_vector<int, 3>>);
static_assert(std::is_base_of_v<small_vector_base<int>, small_vector<int, 300>>);
static_assert(!std::is_constructible_v<small_vector_base<int>>);
static_assert(std::is_nothrow_move_constructible_v<small_vector<int, 4>>);
static_assert(std::is_nothrow_move_constructible_v<small_vector<std::string, 4>>);
static_assert(std::is_nothrow_move_assignable_v<small_vector<std::string, 4>>);
static_assert(std::is_nothrow_default_constructible_v<small_vector<std::string, 4>>);
// size_type vs value constructors are not confused with the iterator constructor.
static_assert(std::is_constructible_v<small_vector<int, 4>, int, int>);

// ---- typed tests over N
// --------------------------------------------------------------------------

template <std::size_t N>
struct inline_n {
  static constexpr std::size_t value = N;
};

template <class P>
class SmallVectorN : public ::testing::Test {
 protected:
  static constexpr std::size_t kN = P::value;
  using ints = small_vector<int, kN>;
  using objs = small_vector<counted, kN>;
  void SetUp() override { lowalloc_test::reset_counts(); }
  void TearDown() override { EXPECT_EQ(counts().live(), 0) << "leaked or double-destroyed"; }
};
using Ns = ::testing::Types<inline_n<0>, inline_n<1>, inline_n<2>, inline_n<8>, inline_n<33>>;
TYPED_TEST_SUITE(SmallVectorN, Ns);

template <class V>
std::vector<int> values(const V& v) {
  std::vector<int> out;
  for (const auto& e : v) {
    if constexpr (std::is_same_v<std::decay_t<decltype(e)>, int>) {
      out.push_back(e);
    } else {
      out.push_back(e.value());
    }
  }
  return out;
}
std::vector<int> iota_vec(int n, int start = 0) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return v;
}

TYPED_TEST(SmallVectorN, DefaultIsEmptyInlineAndDoesNotAllocate) {
  constexpr std::size_t N = TestFixture::kN;
  lowalloc::alloc_counter scope;
  typename TestFixture::ints v;
  EXPECT_EQ(scope.allocations(), 0u);
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.size(), 0u);
  EXPECT_EQ(v.capacity(), N);
  EXPECT_TRUE(v.is_inline());
  EXPECT_NE(v.data(), nullptr);
}

TYPED_TEST(SmallVectorN, PushBackUpToNNeverAllocatesThenSpillsOnce) {
  constexpr std::size_t N = TestFixture::kN;
  typename TestFixture::ints v;
  lowalloc::alloc_counter scope;
  for (std::size_t i = 0; i < N; ++i) v.push_back(static_cast<int>(i));
  EXPECT_EQ(scope.allocations(), 0u);
  EXPECT_TRUE(v.is_inline());
  LOWALLOC_EXPECT_ALLOCATIONS(1, v.push_back(-1));
  EXPECT_FALSE(v.is_inline());
  EXPECT_GE(v.capacity(), N + 1);
  EXPECT_EQ(v.size(), N + 1);
  for (std::size_t i = 0; i < N; ++i) EXPECT_EQ(v[i], static_cast<int>(i));
  EXPECT_EQ(v.back(), -1);
}

TYPED_TEST(SmallVectorN, GrowthIsGeometric) {
  typename TestFixture::ints v;
  lowalloc::alloc_counter scope;
  for (int i = 0; i < 10000; ++i) v.push_back(i);
  // N..10000 by doubling: at most ~log2(10000) + 1 allocations.
  EXPECT_LE(scope.allocations(), 15u);
  EXPECT_EQ(values(v), iota_vec(10000));
}

TYPED_TEST(SmallVectorN, ConstructorsAllocateOnlyWhenTheResultDoesNotFit) {
  constexpr std::size_t N = TestFixture::kN;
  using V = typename TestFixture::ints;
  const std::vector<int> src = iota_vec(static_cast<int>(N) + 3);
  const auto first = src.begin();
  const auto fits = first + static_cast<std::ptrdiff_t>(N);
  {
    lowalloc::alloc_counter scope;
    V a(N);
    V b(N, 7);
    V c(first, fits);
    EXPECT_EQ(scope.allocations(), 0u);
    EXPECT_EQ(a.size(), N);
    EXPECT_EQ(values(b), std::vector<int>(N, 7));
    EXPECT_EQ(values(c), std::vector<int>(first, fits));
    scope.reset();
    V copy(c);
    EXPECT_EQ(scope.allocations(), 0u);
    EXPECT_EQ(copy, c);
  }
  {
    lowalloc::alloc_counter scope;
    V a(N + 1);
    EXPECT_EQ(scope.allocations(), 1u);
    V b(N + 2, 7);
    EXPECT_EQ(scope.allocations(), 2u);
    V c(src.begin(), src.end());
    EXPECT_EQ(scope.allocations(), 3u);
    V copy(c);
    EXPECT_EQ(scope.allocations(), 4u);
    EXPECT_EQ(a.capacity(), N + 1);  // exactly what was asked for
    EXPECT_EQ(b.capacity(), N + 2);
    EXPECT_EQ(copy.capacity(), src.size());
    EXPECT_EQ(values(c), src);
    EXPECT_EQ(copy, c);
  }
  // Value-initialisation zeroes.
  V zeros(N + 5);
  for (int x : zeros) EXPECT_EQ(x, 0);
}

TYPED_TEST(SmallVectorN, InputIteratorConstruction) {
  std::istringstream in("1 2 3 4 5 6 7 8 9 10 11 12");
  typename TestFixture::ints v{std::istream_iterator<int>(in), std::istream_iterator<int>()};
  EXPECT_EQ(values(v), iota_vec(12, 1));
}

TYPED_TEST(SmallVectorN, ElementLifetimesAreExact) {
  constexpr int N = static_cast<int>(TestFixture::kN);
  {
    typename TestFixture::objs v;
    for (int i = 0; i < N + 5; ++i) v.emplace_back(i);
    EXPECT_EQ(counts().live(), N + 5);
    v.pop_back();
    EXPECT_EQ(counts().live(), N + 4);
    v.erase(v.begin());
    EXPECT_EQ(counts().live(), N + 3);
    v.resize(2);
    EXPECT_EQ(counts().live(), 2);
    v.clear();
    EXPECT_EQ(counts().live(), 0);
    v.resize(static_cast<std::size_t>(N) + 1);
    EXPECT_EQ(counts().default_constructions, N + 1);
  }
  EXPECT_EQ(counts().live(), 0);
}

TYPED_TEST(SmallVectorN, GrowthMovesNothrowElementsAndNeverCopiesThem) {
  constexpr int N = static_cast<int>(TestFixture::kN);
  typename TestFixture::objs v;
  for (int i = 0; i < N; ++i) v.emplace_back(i);
  lowalloc_test::reset_counts();
  v.emplace_back(N);  // spill: N moves, one construction
  EXPECT_EQ(counts().copies, 0);
  EXPECT_EQ(counts().moves, N);
  EXPECT_EQ(counts().destructions, N);
  EXPECT_EQ(values(v), iota_vec(N + 1));
  lowalloc_test::reset_counts();
  counts().constructions = N + 1;  // keep live() right for TearDown
}

TYPED_TEST(SmallVectorN, MoveOfAHeapVectorHandsOverTheBuffer) {
  constexpr std::size_t N = TestFixture::kN;
  typename TestFixture::objs v;
  for (std::size_t i = 0; i < N + 1; ++i) v.emplace_back(static_cast<int>(i));
  const counted* buffer = v.data();
  const long moves = counts().moves;
  lowalloc::alloc_counter scope;
  typename TestFixture::objs w(std::move(v));
  EXPECT_EQ(scope.allocations(), 0u);
  EXPECT_EQ(counts().moves, moves);  // no element moved
  EXPECT_EQ(w.data(), buffer);
  EXPECT_TRUE(v.empty());  // NOLINT(bugprone-use-after-move): documented state
  EXPECT_TRUE(v.is_inline());
  EXPECT_EQ(v.capacity(), N);
  v.emplace_back(1);  // usable again
  // Assignment too.
  typename TestFixture::objs x;
  x = std::move(w);
  EXPECT_EQ(x.data(), buffer);
  EXPECT_TRUE(w.empty());  // NOLINT(bugprone-use-after-move)
}

TYPED_TEST(SmallVectorN, MoveOfAnInlineVectorMovesTheElements) {
  constexpr std::size_t N = TestFixture::kN;
  if (N == 0) GTEST_SKIP() << "no inline storage";
  typename TestFixture::objs v;
  for (std::size_t i = 0; i < N; ++i) v.emplace_back(static_cast<int>(i));
  lowalloc_test::reset_counts();
  counts().constructions = static_cast<long>(N);
  {
    lowalloc::alloc_counter scope;
    typename TestFixture::objs w(std::move(v));
    EXPECT_EQ(scope.allocations(), 0u);
    EXPECT_EQ(counts().moves, static_cast<long>(N));
    EXPECT_EQ(counts().copies, 0);
    EXPECT_TRUE(w.is_inline());
    EXPECT_TRUE(v.empty());  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(values(w), iota_vec(static_cast<int>(N)));
  }
}

TYPED_TEST(SmallVectorN, CopyAssignmentReusesCapacity) {
  constexpr int N = static_cast<int>(TestFixture::kN);
  using V = typename TestFixture::ints;
  const std::vector<int> src_a = iota_vec(N + 10), src_b = iota_vec(N + 4, 100);
  V a(src_a.begin(), src_a.end());
  V b(src_b.begin(), src_b.end());
  LOWALLOC_EXPECT_NO_ALLOCATIONS(a = b);
  EXPECT_EQ(a, b);
  V c;
  LOWALLOC_EXPECT_ALLOCATIONS(1, c = a);
  EXPECT_EQ(c, a);
  a = a;  // self-assignment
  EXPECT_EQ(a, b);
}

TYPED_TEST(SmallVectorN, ShrinkToFitReturnsToInlineStorage) {
  constexpr std::size_t N = TestFixture::kN;
  typename TestFixture::objs v;
  for (std::size_t i = 0; i < N + 10; ++i) v.emplace_back(static_cast<int>(i));
  EXPECT_FALSE(v.is_inline());
  v.resize(N);
  lowalloc::alloc_counter scope;
  v.shrink_to_fit();
  EXPECT_EQ(scope.allocations(), 0u);
  EXPECT_EQ(scope.deallocations(), 1u);
  EXPECT_TRUE(v.is_inline());
  EXPECT_EQ(v.capacity(), N);
  EXPECT_EQ(values(v), iota_vec(static_cast<int>(N)));
  // On the heap, shrink to exactly size().
  typename TestFixture::ints w;
  w.reserve(N + 100);
  w.resize(N + 3, 5);
  LOWALLOC_EXPECT_ALLOCATIONS(1, w.shrink_to_fit());
  EXPECT_EQ(w.capacity(), N + 3);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(w.shrink_to_fit());
}

TYPED_TEST(SmallVectorN, ReserveAllocatesExactlyAndOnlyWhenNeeded) {
  constexpr std::size_t N = TestFixture::kN;
  typename TestFixture::ints v;
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.reserve(N));
  LOWALLOC_EXPECT_ALLOCATIONS(1, v.reserve(N + 17));
  EXPECT_EQ(v.capacity(), N + 17);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(for (std::size_t i = 0; i < N + 17; ++i) v.push_back(1));
  EXPECT_THROW(v.reserve(v.max_size() + 1), std::length_error);
  EXPECT_EQ(v.size(), N + 17);
}

TYPED_TEST(SmallVectorN, MaxSizeIsEnforced) {
  typename TestFixture::ints v{1, 2, 3};
  EXPECT_EQ(v.max_size(), (std::size_t(1) << 39) - 1);
  EXPECT_THROW(v.resize(v.max_size() + 1), std::length_error);
  EXPECT_THROW(v.insert(v.begin(), v.max_size(), 0), std::length_error);
  EXPECT_THROW(v.assign(v.max_size() + 1, 0), std::length_error);
  EXPECT_EQ(values(v), (std::vector<int>{1, 2, 3}));
}

TYPED_TEST(SmallVectorN, SelfReferencingPushBackAndInsertAcrossGrowth) {
  constexpr std::size_t N = TestFixture::kN;
  for (std::size_t fill : {N, N + 1, std::size_t(0) + (N > 0 ? N - 1 : 0)}) {
    typename TestFixture::objs v;
    for (std::size_t i = 0; i < fill; ++i) v.emplace_back(static_cast<int>(i) + 10);
    if (v.empty()) v.emplace_back(10);
    std::vector<counted> ref(v.begin(), v.end());

    v.push_back(v[0]);
    ref.push_back(ref[0]);
    v.shrink_to_fit();
    v.push_back(std::move(v.back()));
    ref.push_back(std::move(ref.back()));
    ASSERT_EQ(values(v), values(ref));

    v.shrink_to_fit();
    v.insert(v.begin(), v.back());
    ref.insert(ref.begin(), ref.back());
    ASSERT_EQ(values(v), values(ref));

    v.shrink_to_fit();
    v.emplace(v.begin() + 1, v[2]);
    ref.emplace(ref.begin() + 1, ref[2]);
    ASSERT_EQ(values(v), values(ref));

    v.shrink_to_fit();
    v.insert(v.begin() + 1, 3, v.back());
    ref.insert(ref.begin() + 1, 3, counted(ref.back()));
    ASSERT_EQ(values(v), values(ref));

    // Inserting the vector into itself (std::vector forbids this; small_vector allows it).
    v.shrink_to_fit();
    const std::vector<counted> copy(ref);
    v.insert(v.begin() + 2, v.begin(), v.end());
    ref.insert(ref.begin() + 2, copy.begin(), copy.end());
    ASSERT_EQ(values(v), values(ref));
    v.reserve(v.size() * 3);  // and without growth
    const std::vector<counted> copy2(ref);
    v.insert(v.begin() + 1, v.begin() + 2, v.end() - 1);
    ref.insert(ref.begin() + 1, copy2.begin() + 2, copy2.end() - 1);
    ASSERT_EQ(values(v), values(ref));

    v.resize(v.size() + 40, v[1]);
    ref.resize(ref.size() + 40, counted(ref[1]));
    ASSERT_EQ(values(v), values(ref));

    v.assign(5, v[3]);
    ref.assign(5, counted(ref[3]));
    ASSERT_EQ(values(v), values(ref));

    v.assign(v.begin() + 1, v.end());
    ref.erase(ref.begin());
    ASSERT_EQ(values(v), values(ref));
  }
}

TYPED_TEST(SmallVectorN, InsertAndEraseEveryPosition) {
  constexpr int N = static_cast<int>(TestFixture::kN);
  for (int size : {0, 1, N, N + 1, N + 7}) {
    for (int pos = 0; pos <= size; ++pos) {
      typename TestFixture::objs v;
      std::vector<int> ref = iota_vec(size);
      for (int x : ref) v.emplace_back(x);
      auto it = v.insert(v.begin() + pos, counted(-1));
      ref.insert(ref.begin() + pos, -1);
      EXPECT_EQ(it - v.begin(), pos);
      EXPECT_EQ(values(v), ref);
      it = v.insert(v.begin() + pos, {-2, -3});
      ref.insert(ref.begin() + pos, {-2, -3});
      EXPECT_EQ(it - v.begin(), pos);
      EXPECT_EQ(values(v), ref);
      it = v.erase(v.begin() + pos, v.begin() + pos + 2);
      ref.erase(ref.begin() + pos, ref.begin() + pos + 2);
      EXPECT_EQ(it - v.begin(), pos);
      it = v.erase(v.begin() + pos);
      ref.erase(ref.begin() + pos);
      EXPECT_EQ(it - v.begin(), pos);
      EXPECT_EQ(values(v), ref);
    }
  }
}

TYPED_TEST(SmallVectorN, InsertFromInputIterators) {
  typename TestFixture::ints v{1, 2, 3};
  std::istringstream in("7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30");
  v.insert(v.begin() + 1, std::istream_iterator<int>(in), std::istream_iterator<int>());
  std::vector<int> expect{1};
  for (int i = 7; i <= 30; ++i) expect.push_back(i);
  expect.push_back(2);
  expect.push_back(3);
  EXPECT_EQ(values(v), expect);
  std::istringstream in2("4 5");
  v.assign(std::istream_iterator<int>(in2), std::istream_iterator<int>());
  EXPECT_EQ(values(v), (std::vector<int>{4, 5}));
}

TYPED_TEST(SmallVectorN, SwapEveryCombination) {
  constexpr int N = static_cast<int>(TestFixture::kN);
  for (int a_size : {0, N, N + 3}) {
    for (int b_size : {0, 1, N, N + 5}) {
      typename TestFixture::objs a, b;
      for (int i = 0; i < a_size; ++i) a.emplace_back(i);
      for (int i = 0; i < b_size; ++i) b.emplace_back(100 + i);
      const bool a_heap = !a.is_inline(), b_heap = !b.is_inline();
      const counted* a_data = a.data();
      const counted* b_data = b.data();
      swap(a, b);
      EXPECT_EQ(values(a), iota_vec(b_size, 100));
      EXPECT_EQ(values(b), iota_vec(a_size));
      if (a_heap && b_heap) {  // buffers exchanged, no element touched
        EXPECT_EQ(a.data(), b_data);
        EXPECT_EQ(b.data(), a_data);
      }
      EXPECT_EQ(counts().live(), a_size + b_size);
    }
  }
}

TYPED_TEST(SmallVectorN, SwapOfHeapAndInlineDoesNotAllocate) {
  constexpr int N = static_cast<int>(TestFixture::kN);
  typename TestFixture::ints heap, inl;
  for (int i = 0; i < N + 4; ++i) heap.push_back(i);
  for (int i = 0; i < N; ++i) inl.push_back(-i);
  const int* buffer = heap.data();
  LOWALLOC_EXPECT_NO_ALLOCATIONS(heap.swap(inl));
  EXPECT_EQ(inl.data(), buffer);
  EXPECT_EQ(values(inl), iota_vec(N + 4));
  EXPECT_EQ(heap.size(), static_cast<std::size_t>(N));
  EXPECT_TRUE(heap.is_inline() || N == 0);
}

TYPED_TEST(SmallVectorN, ComparisonsAreLexicographic) {
  using V = typename TestFixture::ints;
  V a{1, 2, 3}, b{1, 2, 4}, c{1, 2};
  EXPECT_TRUE(a == a);
  EXPECT_TRUE(a != b);
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(c < a);
  EXPECT_TRUE(b > a);
  EXPECT_TRUE(a <= a);
  EXPECT_TRUE(b >= a);
#if LOWALLOC_HAS_THREE_WAY_COMPARISON
  EXPECT_TRUE((a <=> b) < 0);
  EXPECT_TRUE((a <=> a) == 0);
  small_vector<std::string, TestFixture::kN> s{"b"}, t{"a", "z"};
  EXPECT_TRUE((s <=> t) > 0);
#endif
  // Against other inline capacities, through the base.
  small_vector<int, 50> d{1, 2, 3};
  EXPECT_TRUE(a == d);
  EXPECT_TRUE(c < d);
}

TYPED_TEST(SmallVectorN, EraseAndEraseIf) {
  typename TestFixture::ints v{1, 2, 3, 2, 5, 2, 7, 8, 9, 2};
  EXPECT_EQ(erase(v, 2), 4u);
  EXPECT_EQ(values(v), (std::vector<int>{1, 3, 5, 7, 8, 9}));
  EXPECT_EQ(erase_if(v, [](int x) { return x % 2 == 1; }), 5u);
  EXPECT_EQ(values(v), (std::vector<int>{8}));
}

TYPED_TEST(SmallVectorN, AtThrowsOutOfRange) {
  typename TestFixture::ints v{1, 2};
  EXPECT_EQ(v.at(1), 2);
  EXPECT_THROW(v.at(2), std::out_of_range);
  const auto& cv = v;
  EXPECT_THROW(cv.at(100), std::out_of_range);
}

TYPED_TEST(SmallVectorN, RangesAndAppend) {
  typename TestFixture::ints v;
  std::list<int> l{1, 2, 3};
  v.append_range(l);
  v.insert_range(v.begin(), std::array<int, 2>{-1, 0});
  v.append(l.begin(), l.end());
  EXPECT_EQ(values(v), (std::vector<int>{-1, 0, 1, 2, 3, 1, 2, 3}));
  v.assign_range(std::vector<int>{9, 9});
  EXPECT_EQ(values(v), (std::vector<int>{9, 9}));
  v = {4, 5, 6};
  EXPECT_EQ(values(v), (std::vector<int>{4, 5, 6}));
  EXPECT_EQ(std::vector<int>(v.rbegin(), v.rend()), (std::vector<int>{6, 5, 4}));
  EXPECT_EQ(*v.crbegin(), 6);
  EXPECT_EQ(v.cend() - v.cbegin(), 3);
}

TYPED_TEST(SmallVectorN, MoveOnlyElements) {
  constexpr int N = static_cast<int>(TestFixture::kN);
  small_vector<lowalloc_test::move_only, TestFixture::kN> v;
  for (int i = 0; i < N + 3; ++i) v.emplace_back(i);
  v.insert(v.begin(), lowalloc_test::move_only(-1));
  v.erase(v.begin() + 1);
  auto w = std::move(v);
  EXPECT_EQ(w.size(), static_cast<std::size_t>(N + 3));
  EXPECT_EQ(w[0].value(), -1);
  w.resize(2);
  w.shrink_to_fit();
  small_vector<lowalloc_test::move_only, TestFixture::kN> x;
  x = std::move(w);
  EXPECT_EQ(x[1].value(), 1);
}

TYPED_TEST(SmallVectorN, NonDefaultConstructibleElements) {
  small_vector<lowalloc_test::no_default, TestFixture::kN> v;
  for (int i = 0; i < 40; ++i) v.emplace_back(i);
  v.resize(3, lowalloc_test::no_default(7));
  v.insert(v.begin(), 2, lowalloc_test::no_default(9));
  EXPECT_EQ(v.size(), 5u);
  EXPECT_EQ(v[0].value(), 9);
  EXPECT_EQ(v[2].value(), 0);
}

TYPED_TEST(SmallVectorN, OverAlignedElements) {
  small_vector<lowalloc_test::over_aligned, TestFixture::kN> v;
  for (int i = 0; i < 40; ++i) {
    v.emplace_back(i);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % 64, 0u) << i;
  }
  v.resize(TestFixture::kN);
  v.shrink_to_fit();
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % 64, 0u);
  EXPECT_EQ(v.size(), TestFixture::kN);
}

// ---- the size-erased base ----------------------------------------------------------------------

// One function for every N; not a template.
int fill_and_sum(small_vector_base<int>& v, int n) {
  for (int i = 1; i <= n; ++i) v.push_back(i);
  return std::accumulate(v.begin(), v.end(), 0);
}

// ---- conformance with std::vector's specification ----------------------------------------------

// Trivially copyable, yet only movable: push_back(T&&) must move it (its by-value fast path for
// small trivial types copied it, which did not compile).
struct trivial_move_only {
  trivial_move_only() = default;
  explicit trivial_move_only(int v) : value(v) {}
  trivial_move_only(trivial_move_only&&) = default;
  trivial_move_only& operator=(trivial_move_only&&) = default;
  int value = 0;
};
static_assert(std::is_trivially_copyable_v<trivial_move_only>);
static_assert(!std::is_copy_constructible_v<trivial_move_only>);

template <class V>
std::vector<int> member_values(const V& v) {
  std::vector<int> out;
  for (const auto& e : v) out.push_back(e.value);
  return out;
}

TEST(SmallVectorConformance, TriviallyCopyableMoveOnlyElements) {
  small_vector<trivial_move_only, 2> v;
  v.push_back(trivial_move_only(1));
  trivial_move_only two(2);
  v.push_back(std::move(two));
  v.push_back(trivial_move_only(3));  // spills to the heap
  v.emplace_back(4);
  v.insert(v.begin(), trivial_move_only(0));
  EXPECT_EQ(member_values(v), (std::vector<int>{0, 1, 2, 3, 4}));
  small_vector<trivial_move_only, 8> big;
  for (int i = 0; i < 3; ++i) big.push_back(trivial_move_only(i));  // inline
  small_vector<trivial_move_only, 8> moved(std::move(big));
  EXPECT_EQ(member_values(moved), (std::vector<int>{0, 1, 2}));
  small_vector<trivial_move_only, 8> assigned;
  assigned = std::move(moved);
  EXPECT_EQ(member_values(assigned), (std::vector<int>{0, 1, 2}));
  v.erase(v.begin() + 2, v.end());
  v.shrink_to_fit();  // back inline
  EXPECT_TRUE(v.is_inline());
  EXPECT_EQ(member_values(v), (std::vector<int>{0, 1}));
}

// An element whose swap is its own and counts; its moves count too.
struct swap_counted {
  static int swaps;
  static int moves;
  explicit swap_counted(int v) : value(v) {}
  swap_counted(swap_counted&& o) noexcept : value(o.value) { ++moves; }
  swap_counted& operator=(swap_counted&& o) noexcept {
    value = o.value;
    ++moves;
    return *this;
  }
  friend void swap(swap_counted& a, swap_counted& b) noexcept {
    std::swap(a.value, b.value);
    ++swaps;
  }
  int value;
};
int swap_counted::swaps = 0;
int swap_counted::moves = 0;

// `using std::swap; swap(a, b)` and std::ranges::swap must find small_vector's swap (two inline
// vectors of one size: element swaps only), not the generic std::swap (three whole-vector moves).
TEST(SmallVectorConformance, SwapFoundByLookupIsTheVectorsOwn) {
  small_vector<swap_counted, 4> a, b;
  for (int i = 0; i < 3; ++i) a.emplace_back(i);
  for (int i = 0; i < 3; ++i) b.emplace_back(10 + i);
  swap_counted::swaps = swap_counted::moves = 0;
  {
    using std::swap;
    swap(a, b);
  }
  EXPECT_EQ(swap_counted::swaps, 3);
  EXPECT_EQ(swap_counted::moves, 0);
  EXPECT_EQ(member_values(a), (std::vector<int>{10, 11, 12}));
  EXPECT_EQ(member_values(b), (std::vector<int>{0, 1, 2}));
#if LOWALLOC_HAS_RANGES
  swap_counted::swaps = swap_counted::moves = 0;
  std::ranges::swap(a, b);
  EXPECT_EQ(swap_counted::swaps, 3);
  EXPECT_EQ(swap_counted::moves, 0);
  EXPECT_EQ(member_values(a), (std::vector<int>{0, 1, 2}));
#endif
  // Through the size-erased base, the base's swap.
  small_vector_base<swap_counted>& ra = a;
  small_vector_base<swap_counted>& rb = b;
  swap_counted::swaps = swap_counted::moves = 0;
  {
    using std::swap;
    swap(ra, rb);
  }
  EXPECT_EQ(swap_counted::swaps, 3);
  EXPECT_EQ(swap_counted::moves, 0);
}

TEST(SmallVectorBase, OneFunctionServesEveryN) {
  small_vector<int, 1> a;
  small_vector<int, 16> b;
  small_vector<int, 0> c;
  EXPECT_EQ(fill_and_sum(a, 10), 55);
  EXPECT_EQ(fill_and_sum(b, 10), 55);
  EXPECT_EQ(fill_and_sum(c, 10), 55);
  EXPECT_TRUE(b.is_inline());
  EXPECT_EQ(b.inline_capacity(), 16u);
  EXPECT_EQ(static_cast<small_vector_base<int>&>(a).inline_capacity(), 1u);
}

TEST(SmallVectorBase, AssignAndSwapAcrossInlineCapacities) {
  small_vector<int, 2> a{1, 2, 3, 4};  // heap
  small_vector<int, 16> b{5, 6, 7};    // inline
  small_vector_base<int>& ra = a;
  small_vector_base<int>& rb = b;
  swap(ra, rb);  // a's heap buffer moves to b; b's elements fit a's storage? no (3 > 2)
  EXPECT_EQ(values(a), (std::vector<int>{5, 6, 7}));
  EXPECT_EQ(values(b), (std::vector<int>{1, 2, 3, 4}));
  ra = rb;
  EXPECT_EQ(a, b);
  small_vector<int, 4> c(std::move(rb));  // takes the buffer of any N
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(values(c), (std::vector<int>{1, 2, 3, 4}));
  small_vector<int, 8> d(ra);  // explicit copy from any N
  EXPECT_EQ(d, a);
}

TEST(SmallVectorBase, MoveFromLargerNThatDoesNotFitAllocates) {
  small_vector<int, 16> big(10, 3);  // inline in a 16
  lowalloc::alloc_counter scope;
  small_vector<int, 4> small(std::move(big));
  EXPECT_EQ(scope.allocations(), 1u);
  EXPECT_EQ(small.size(), 10u);
  EXPECT_TRUE(big.empty());
}

// ---- relocation --------------------------------------------------------------------------------

// A type with a non-trivial move that the user declares trivially relocatable.
struct tracked_handle {
  static inline int moves = 0;
  int* p;
  explicit tracked_handle(int v) : p(new int(v)) {}
  tracked_handle(tracked_handle&& o) noexcept : p(std::exchange(o.p, nullptr)) { ++moves; }
  tracked_handle(const tracked_handle& o) : p(new int(*o.p)) {}
  tracked_handle& operator=(tracked_handle o) noexcept {
    std::swap(p, o.p);
    return *this;
  }
  ~tracked_handle() { delete p; }
};
struct untracked_handle : tracked_handle {
  using tracked_handle::tracked_handle;
};

}  // namespace

template <>
struct lowalloc::is_trivially_relocatable<tracked_handle> : std::true_type {};

namespace {

TEST(SmallVectorRelocation, MarkedTypesGrowByMemcpy) {
  tracked_handle::moves = 0;
  small_vector<tracked_handle, 2> v;
  for (int i = 0; i < 100; ++i) v.emplace_back(i);
  EXPECT_EQ(tracked_handle::moves, 0);  // every growth relocated the handles by memcpy
  for (int i = 0; i < 100; ++i) ASSERT_EQ(*v[static_cast<std::size_t>(i)].p, i);
  // Relocation never replaces a copy: copying still copies.
  small_vector<tracked_handle, 2> w(v);
  EXPECT_NE(w[0].p, v[0].p);
  EXPECT_EQ(*w[99].p, 99);
}

TEST(SmallVectorRelocation, UnmarkedTypesAreMoved) {
  static_assert(!lowalloc::is_trivially_relocatable_v<untracked_handle>);
  tracked_handle::moves = 0;
  small_vector<untracked_handle, 2> v;
  for (int i = 0; i < 3; ++i) v.emplace_back(i);
  EXPECT_EQ(tracked_handle::moves, 2);
}

TEST(SmallVectorRelocation, HeapGrowthOfTrivialTypesIsOneAllocationPerStep) {
  // With std::allocator, trivially copyable elements grow with realloc: each growth is one
  // allocation event, even when the block is extended in place.
  small_vector<int, 4> v(100, 1);
  lowalloc::alloc_counter scope;
  v.reserve(1000);
  EXPECT_EQ(scope.allocations(), 1u);
  EXPECT_EQ(v.size(), 100u);
  for (int x : v) ASSERT_EQ(x, 1);
}

// ---- allocators --------------------------------------------------------------------------------

TEST(SmallVectorAllocator, PolymorphicAllocatorIsUsedForTheHeapAndPassedToElements) {
  std::array<std::byte, 4096> buffer;
  std::pmr::monotonic_buffer_resource mr(buffer.data(), buffer.size(),
                                         std::pmr::null_memory_resource());
  using V = small_vector<std::pmr::string, 2, std::pmr::polymorphic_allocator<std::pmr::string>>;
  lowalloc::alloc_counter scope;
  V v(&mr);
  v.emplace_back("a string long enough to need the heap, from the arena");
  v.emplace_back("b");
  v.emplace_back("c");                 // spills into the arena
  EXPECT_EQ(scope.allocations(), 0u);  // nothing from the global heap
  EXPECT_EQ(v[0].get_allocator().resource(), &mr);
  EXPECT_EQ(v.get_allocator().resource(), &mr);
  auto* p = reinterpret_cast<std::byte*>(v.data());
  EXPECT_TRUE(p >= buffer.data() && p < buffer.data() + buffer.size());
  V w(v);  // polymorphic_allocator does not propagate on copy: default resource
  EXPECT_EQ(w.get_allocator().resource(), std::pmr::get_default_resource());
}

}  // namespace

#if LOWALLOC_ASSERTIONS
namespace {
TEST(SmallVectorDeathTest, DebugChecksCatchMisuse) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  small_vector<int, 4> v{1};
  EXPECT_DEATH((void)v[1], "pos < size");
  v.clear();
  EXPECT_DEATH((void)v.front(), "empty");
  EXPECT_DEATH((void)v.back(), "empty");
  EXPECT_DEATH(v.pop_back(), "empty");
}
}  // namespace
#endif
