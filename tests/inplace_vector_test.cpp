// lowalloc::inplace_vector: every member over capacities 0, 1, 2, 8 and 33, with elements that
// count their lifetimes, throw on the k-th copy or move, cannot be copied, cannot be
// default-constructed, or are over-aligned. No operation allocates; every exception guarantee
// is checked for every k.
#include <lowalloc/inplace_vector.hpp>

#include <lowalloc/alloc_count.hpp>

#include <gtest/gtest.h>

#include "support/element_types.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <list>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if LOWALLOC_HAS_THREE_WAY_COMPARISON
#include <compare>
#endif
#if LOWALLOC_HAS_RANGES
#include <concepts>  // std::ranges::swap
#endif

namespace {

using lowalloc::inplace_vector;
using lowalloc_test::counted;
using lowalloc_test::counts;
using lowalloc_test::lifetime_counts;
using lowalloc_test::move_only;
using lowalloc_test::never_throw;
using lowalloc_test::no_default;
using lowalloc_test::over_aligned;
using lowalloc_test::reset_counts;
using lowalloc_test::test_exception;
using lowalloc_test::throw_after;
using lowalloc_test::throwing;

// --- static properties ---------------------------------------------------------------------------

static_assert(sizeof(inplace_vector<int, 8>) == 36, "32 bytes of ints + a uint8_t size, padded");
static_assert(sizeof(inplace_vector<char, 255>) == 256, "uint8_t size up to 255");
static_assert(sizeof(inplace_vector<char, 256>) == 258, "uint16_t size from 256");
static_assert(sizeof(inplace_vector<char, 65536>) == 65540, "uint32_t size from 65536");
static_assert(sizeof(inplace_vector<std::uint64_t, 3>) == 32, "24 bytes + size, 8-aligned");
static_assert(sizeof(inplace_vector<over_aligned, 2>) == 3 * 64, "2 elements + size, 64-aligned");
static_assert(alignof(inplace_vector<over_aligned, 2>) == 64, "aligned as T");

static_assert(std::is_trivially_copyable<inplace_vector<int, 8>>::value, "");
static_assert(std::is_trivially_destructible<inplace_vector<int, 8>>::value, "");
static_assert(std::is_trivially_copy_constructible<inplace_vector<int, 33>>::value, "");
static_assert(std::is_trivially_move_assignable<inplace_vector<int, 33>>::value, "");
static_assert(!std::is_trivially_copyable<inplace_vector<counted, 8>>::value, "");
static_assert(!std::is_trivially_destructible<inplace_vector<counted, 8>>::value, "");
// Trivially destructible but not trivially copyable: a trivial destructor all the same.
static_assert(std::is_trivially_destructible<inplace_vector<move_only, 8>>::value, "");
static_assert(!std::is_trivially_copyable<inplace_vector<move_only, 8>>::value, "");

struct with_default_member {
  int x = 7;
};
static_assert(std::is_trivially_copyable<inplace_vector<with_default_member, 4>>::value, "");

static_assert(std::is_empty<inplace_vector<int, 0>>::value, "");
static_assert(std::is_empty<inplace_vector<counted, 0>>::value, "");
static_assert(std::is_empty<inplace_vector<no_default, 0>>::value, "");
static_assert(std::is_trivially_copyable<inplace_vector<counted, 0>>::value, "");

// N == 0: trivially copyable, empty and trivially default constructible, whatever T is
// ([inplace.vector.overview]/6), even when T has no default constructor.
static_assert(std::is_trivially_default_constructible<inplace_vector<int, 0>>::value, "");
static_assert(std::is_trivially_default_constructible<inplace_vector<counted, 0>>::value, "");
static_assert(std::is_trivially_default_constructible<inplace_vector<no_default, 0>>::value, "");
static_assert(std::is_trivially_copyable<inplace_vector<throwing, 0>>::value, "");
static_assert(std::is_trivially_destructible<inplace_vector<counted, 0>>::value, "");
// N > 0 is default constructible but never trivially so (the size starts at 0).
static_assert(!std::is_trivially_default_constructible<inplace_vector<int, 1>>::value, "");

// Each special member is trivial exactly when [inplace.vector.overview]/6.1-6.3 says so, each on
// its own. The element types below make one condition false at a time.
template <class T>
struct triviality {
  using V = inplace_vector<T, 4>;
  static constexpr bool copy_construct = std::is_trivially_copy_constructible<V>::value;
  static constexpr bool move_construct = std::is_trivially_move_constructible<V>::value;
  static constexpr bool copy_assign = std::is_trivially_copy_assignable<V>::value;
  static constexpr bool move_assign = std::is_trivially_move_assignable<V>::value;
  static constexpr bool destroy = std::is_trivially_destructible<V>::value;
  // What /6 asks.
  static constexpr bool want_destroy = std::is_trivially_destructible<T>::value;
  static constexpr bool want_copy_construct = std::is_trivially_copy_constructible<T>::value;
  static constexpr bool want_move_construct = std::is_trivially_move_constructible<T>::value;
  static constexpr bool want_copy_assign =
      want_destroy && want_copy_construct && std::is_trivially_copy_assignable<T>::value;
  static constexpr bool want_move_assign =
      want_destroy && want_move_construct && std::is_trivially_move_assignable<T>::value;
  static constexpr bool as_specified =
      copy_construct == want_copy_construct && move_construct == want_move_construct &&
      copy_assign == want_copy_assign && move_assign == want_move_assign && destroy == want_destroy;
};

// Counts the calls of its user-provided members, to check that the vector's non-trivial members
// call them.
struct member_calls {
  int copy_constructs = 0;
  int move_constructs = 0;
  int copy_assigns = 0;
  int move_assigns = 0;
  int destroys = 0;
};
member_calls& calls() {
  static member_calls c;
  return c;
}
struct user_copy_assign {  // trivial but for copy assignment
  int v = 0;
  user_copy_assign() = default;
  user_copy_assign(const user_copy_assign&) = default;
  user_copy_assign(user_copy_assign&&) = default;
  user_copy_assign& operator=(const user_copy_assign& o) {
    v = o.v;
    ++calls().copy_assigns;
    return *this;
  }
  user_copy_assign& operator=(user_copy_assign&&) = default;
};
struct user_move_assign {  // trivial but for move assignment
  int v = 0;
  user_move_assign() = default;
  user_move_assign(const user_move_assign&) = default;
  user_move_assign(user_move_assign&&) = default;
  user_move_assign& operator=(const user_move_assign&) = default;
  user_move_assign& operator=(user_move_assign&& o) noexcept {
    v = o.v;
    ++calls().move_assigns;
    return *this;
  }
};
struct user_copy_construct {  // trivial but for copy construction
  int v = 0;
  user_copy_construct() = default;
  user_copy_construct(const user_copy_construct& o) : v(o.v) { ++calls().copy_constructs; }
  user_copy_construct(user_copy_construct&&) = default;
  user_copy_construct& operator=(const user_copy_construct&) = default;
  user_copy_construct& operator=(user_copy_construct&&) = default;
};
struct user_move_construct {  // trivial but for move construction
  int v = 0;
  user_move_construct() = default;
  user_move_construct(const user_move_construct&) = default;
  user_move_construct(user_move_construct&& o) noexcept : v(o.v) { ++calls().move_constructs; }
  user_move_construct& operator=(const user_move_construct&) = default;
  user_move_construct& operator=(user_move_construct&&) = default;
};
struct user_destructor {  // trivial but for the destructor
  int v = 0;
  user_destructor() = default;
  user_destructor(const user_destructor&) = default;
  user_destructor(user_destructor&&) = default;
  user_destructor& operator=(const user_destructor&) = default;
  user_destructor& operator=(user_destructor&&) = default;
  ~user_destructor() { ++calls().destroys; }
};

static_assert(triviality<int>::as_specified && triviality<int>::copy_assign, "");
static_assert(triviality<counted>::as_specified && !triviality<counted>::copy_construct, "");
static_assert(triviality<move_only>::as_specified, "");
// 6.1-6.3: a user-provided copy assignment makes only the copy assignment non-trivial.
static_assert(triviality<user_copy_assign>::as_specified, "");
static_assert(triviality<user_copy_assign>::copy_construct, "");
static_assert(triviality<user_copy_assign>::move_construct, "");
static_assert(!triviality<user_copy_assign>::copy_assign, "");
static_assert(triviality<user_copy_assign>::move_assign, "");
static_assert(triviality<user_copy_assign>::destroy, "");
static_assert(triviality<user_move_assign>::as_specified, "");
static_assert(triviality<user_move_assign>::copy_assign, "");
static_assert(!triviality<user_move_assign>::move_assign, "");
// A user-provided copy constructor: copy construction and copy assignment are not trivial.
static_assert(triviality<user_copy_construct>::as_specified, "");
static_assert(triviality<user_copy_construct>::move_construct, "");
static_assert(!triviality<user_copy_construct>::copy_assign, "");
static_assert(triviality<user_copy_construct>::move_assign, "");
static_assert(triviality<user_move_construct>::as_specified, "");
static_assert(triviality<user_move_construct>::copy_construct, "");
static_assert(triviality<user_move_construct>::copy_assign, "");
static_assert(!triviality<user_move_construct>::move_assign, "");
// A user-provided destructor: neither assignment is trivial. (Whether the constructions are
// depends on whether the library's is_trivially_copy_constructible counts the destructor:
// libstdc++'s does.)
static_assert(triviality<user_destructor>::as_specified, "");
static_assert(!triviality<user_destructor>::copy_assign, "");
static_assert(!triviality<user_destructor>::move_assign, "");

static_assert(std::is_nothrow_default_constructible<inplace_vector<counted, 8>>::value, "");
static_assert(std::is_nothrow_move_constructible<inplace_vector<counted, 8>>::value, "");
static_assert(std::is_nothrow_move_assignable<inplace_vector<counted, 8>>::value, "");
static_assert(!std::is_nothrow_move_constructible<inplace_vector<throwing, 8>>::value, "");
static_assert(std::is_nothrow_move_constructible<inplace_vector<throwing, 0>>::value, "");
static_assert(std::is_nothrow_swappable<inplace_vector<counted, 8>>::value, "");
static_assert(!std::is_nothrow_swappable<inplace_vector<throwing, 8>>::value, "");

static_assert(inplace_vector<int, 8>::capacity() == 8, "");
static_assert(inplace_vector<int, 8>::max_size() == 8, "");
static_assert(inplace_vector<int, 0>::capacity() == 0, "");
static_assert(
    std::is_same<std::iterator_traits<inplace_vector<int, 8>::iterator>::iterator_category,
                 std::random_access_iterator_tag>::value,
    "");
static_assert(std::is_same<inplace_vector<int, 8>::size_type, std::size_t>::value, "");
static_assert(
    std::is_same<decltype(std::declval<inplace_vector<int, 8>&>().try_push_back(1)), int*>::value,
    "try_* return T*");
static_assert(
    std::is_same<decltype(std::declval<inplace_vector<int, 8>&>().push_back(1)), int&>::value,
    "push_back returns a reference (C++26)");
// (size_type, const T&) is not mistaken for an iterator pair.
static_assert(std::is_constructible<inplace_vector<int, 8>, int, int>::value, "");

// --- helpers
// ---------------------------------------------------------------------------------------

int value_of(int x) { return x; }
int value_of(const over_aligned& x) { return x.value; }
template <class E>
int value_of(const E& e) {
  return e.value();
}

// The values of v's elements (allocates: not inside an allocation-counted block).
template <class V>
std::vector<int> values(const V& v) {
  std::vector<int> out;
  for (const auto& e : v) out.push_back(value_of(e));
  return out;
}

// start, start + 1, ..., start + n - 1.
std::vector<int> iota(std::size_t n, int start = 0) {
  std::vector<int> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = start + static_cast<int>(i);
  return out;
}

// A vector holding start, start + 1, ..., start + n - 1.
template <class V>
V make(std::size_t n, int start = 0) {
  V v;
  for (std::size_t i = 0; i < n; ++i) v.emplace_back(start + static_cast<int>(i));
  return v;
}

lifetime_counts operator-(const lifetime_counts& a, const lifetime_counts& b) {
  lifetime_counts d;
  d.constructions = a.constructions - b.constructions;
  d.default_constructions = a.default_constructions - b.default_constructions;
  d.value_constructions = a.value_constructions - b.value_constructions;
  d.copies = a.copies - b.copies;
  d.moves = a.moves - b.moves;
  d.copy_assignments = a.copy_assignments - b.copy_assignments;
  d.move_assignments = a.move_assignments - b.move_assignments;
  d.destructions = a.destructions - b.destructions;
  return d;
}

// Wraps an iterator as a single-pass input iterator.
template <class It>
class input_iter {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = typename std::iterator_traits<It>::value_type;
  using difference_type = std::ptrdiff_t;
  using pointer = It;
  using reference = typename std::iterator_traits<It>::reference;

  input_iter() = default;
  explicit input_iter(It it) : it_(it) {}
  reference operator*() const { return *it_; }
  input_iter& operator++() {
    ++it_;
    return *this;
  }
  void operator++(int) { ++it_; }
  friend bool operator==(const input_iter& a, const input_iter& b) { return a.it_ == b.it_; }
  friend bool operator!=(const input_iter& a, const input_iter& b) { return a.it_ != b.it_; }

 private:
  It it_{};
};

template <class It>
input_iter<It> in(It it) {
  return input_iter<It>(it);
}

// A range whose end is a sentinel of another type (a C++20 range; C++17 code can use it too).
struct int_sentinel {
  const int* last;
  // (C++20 rewrites one into the other, so one of them is unused there.)
  [[maybe_unused]] friend bool operator==(const int* p, int_sentinel s) { return p == s.last; }
  [[maybe_unused]] friend bool operator!=(const int* p, int_sentinel s) { return p != s.last; }
};
struct sentinel_range {
  const int* first;
  const int* last;
  const int* begin() const { return first; }
  int_sentinel end() const { return {last}; }
};

// A range with input iterators only, found through member begin/end.
struct input_range {
  const std::vector<int>* v;
  input_iter<const int*> begin() const { return in(v->data()); }
  input_iter<const int*> end() const { return in(v->data() + v->size()); }
};

// --- typed tests over the capacity, elements `counted`
// --------------------------------------------

template <class Capacity>
class InplaceVector : public ::testing::Test {
 public:
  static constexpr std::size_t cap = Capacity::value;
  static constexpr std::size_t fits = cap < 3 ? cap : 3;  // a size that fits
  using vec = inplace_vector<counted, cap>;
  using ivec = inplace_vector<int, cap>;

 protected:
  void SetUp() override {
    never_throw();
    reset_counts();
  }
  void TearDown() override {
    never_throw();
    EXPECT_EQ(counts().live(), 0) << "elements leaked or destroyed twice";
  }
};

template <std::size_t N>
using capacity = std::integral_constant<std::size_t, N>;
using capacities =
    ::testing::Types<capacity<0>, capacity<1>, capacity<2>, capacity<8>, capacity<33>>;
struct capacity_name {
  template <class Capacity>
  static std::string GetName(int) {
    return "N" + std::to_string(Capacity::value);
  }
};
TYPED_TEST_SUITE(InplaceVector, capacities, capacity_name);

TYPED_TEST(InplaceVector, StaticMembers) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  static_assert(V::capacity() == N, "");
  static_assert(V::max_size() == N, "");
  static_assert(std::is_trivially_copyable<typename TestFixture::ivec>::value, "");
  static_assert(std::is_trivially_destructible<typename TestFixture::ivec>::value, "");
  static_assert(std::is_empty<V>::value == (N == 0), "");
  static_assert(N == 0 || sizeof(V) > N * sizeof(counted), "");
  V v;
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.reserve(0); v.reserve(N); v.shrink_to_fit(); V::reserve(N));
  EXPECT_THROW(v.reserve(N + 1), std::bad_alloc);
  EXPECT_EQ(v.capacity(), N);
  EXPECT_EQ(counts().constructions, 0);
}

TYPED_TEST(InplaceVector, DefaultConstructed) {
  using V = typename TestFixture::vec;
  LOWALLOC_EXPECT_NO_ALLOCATIONS(V v; EXPECT_TRUE(v.empty()); EXPECT_EQ(v.size(), 0u);
                                 EXPECT_EQ(v.begin(), v.end()); EXPECT_EQ(v.rbegin(), v.rend()));
  const V c{};
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.cbegin(), c.cend());
  EXPECT_EQ(counts().constructions, 0);
}

TYPED_TEST(InplaceVector, CountConstructor) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  LOWALLOC_EXPECT_NO_ALLOCATIONS(V v(N); EXPECT_EQ(v.size(), N));
  EXPECT_EQ(counts().default_constructions, static_cast<long>(N));
  EXPECT_EQ(counts().destructions, static_cast<long>(N));
  EXPECT_THROW(V(N + 1), std::bad_alloc);
  EXPECT_EQ(counts().constructions, static_cast<long>(N));  // nothing built for N + 1

  typename TestFixture::ivec iv(N);  // value-initialised: zeros
  EXPECT_EQ(values(iv), std::vector<int>(N, 0));
}

TYPED_TEST(InplaceVector, CountValueConstructor) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  const counted seven(7);
  const auto before = counts();
  LOWALLOC_EXPECT_NO_ALLOCATIONS(V v(N, seven); EXPECT_EQ(v.size(), N));
  EXPECT_EQ((counts() - before).copies, static_cast<long>(N));
  EXPECT_THROW(V(N + 1, seven), std::bad_alloc);
  V v(TestFixture::fits, seven);
  EXPECT_EQ(values(v), std::vector<int>(TestFixture::fits, 7));
  typename TestFixture::ivec iv(TestFixture::fits, 5);  // ints: not an iterator pair
  EXPECT_EQ(values(iv), std::vector<int>(TestFixture::fits, 5));
}

TYPED_TEST(InplaceVector, IteratorRangeConstructor) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  const std::vector<int> src = iota(N + 1, 10);
  const std::list<int> list(src.begin(), src.end());
  LOWALLOC_EXPECT_NO_ALLOCATIONS(V v(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(N));
                                 EXPECT_EQ(v.size(), N));
  EXPECT_EQ(counts().value_constructions, static_cast<long>(N));
  {
    V v(in(src.data()), in(src.data() + N));  // input iterators
    EXPECT_EQ(values(v), iota(N, 10));
    V w(list.begin(), std::prev(list.end()));  // bidirectional
    EXPECT_EQ(values(w), iota(N, 10));
  }
  const auto before = counts();
  EXPECT_THROW(V(src.begin(), src.end()), std::bad_alloc);
  EXPECT_EQ((counts() - before).constructions, 0) << "forward: the count is checked first";
  EXPECT_THROW(V(in(src.data()), in(src.data() + src.size())), std::bad_alloc);
  EXPECT_THROW(V(list.begin(), list.end()), std::bad_alloc);
}

TYPED_TEST(InplaceVector, InitializerListConstructor) {
  using V = typename TestFixture::vec;
  if constexpr (TestFixture::cap >= 2) {
    LOWALLOC_EXPECT_NO_ALLOCATIONS(V v{4, 5}; EXPECT_EQ(v.size(), 2u));
    V v{4, 5};
    EXPECT_EQ(values(v), (std::vector<int>{4, 5}));
    V w = {6};
    EXPECT_EQ(values(w), (std::vector<int>{6}));
  }
  if constexpr (TestFixture::cap < 3) {
    EXPECT_THROW((V{1, 2, 3}), std::bad_alloc);
  }
  EXPECT_TRUE((V{}).empty());
}

TYPED_TEST(InplaceVector, CopyConstructor) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  const V a = make<V>(N);
  const auto before = counts();
  LOWALLOC_EXPECT_NO_ALLOCATIONS(V b(a); EXPECT_EQ(b, a));
  EXPECT_EQ((counts() - before).copies, static_cast<long>(N));
  V b = a;
  if (N > 0) b[0] = counted(100);
  EXPECT_EQ(values(a), iota(N)) << "copies are independent";
  const typename TestFixture::ivec ia = make<typename TestFixture::ivec>(N);
  const typename TestFixture::ivec ib = ia;  // trivial copy
  EXPECT_EQ(ia, ib);
}

TYPED_TEST(InplaceVector, MoveConstructor) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  V a = make<V>(N);
  const auto before = counts();
  V b(std::move(a));
  EXPECT_EQ((counts() - before).moves, static_cast<long>(N));
  EXPECT_EQ((counts() - before).copies, 0);
  EXPECT_EQ(values(b), iota(N));
  EXPECT_EQ(a.size(), N) << "as std: the source keeps its (moved-from) elements";
  for (const auto& e : a) EXPECT_EQ(e.value(), -1);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(V c(std::move(b)); EXPECT_EQ(c.size(), N));
}

TYPED_TEST(InplaceVector, CopyAssignment) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  for (std::size_t from = 0; from <= N; from += (N > 4 ? 4 : 1)) {
    for (std::size_t to = 0; to <= N; to += (N > 4 ? 4 : 1)) {
      V a = make<V>(from, 1);
      V b = make<V>(to, 50);
      const auto before = counts();
      LOWALLOC_EXPECT_NO_ALLOCATIONS(b = a);
      const auto d = counts() - before;
      EXPECT_EQ(values(b), iota(from, 1));
      EXPECT_EQ(d.copy_assignments, static_cast<long>(std::min(from, to)));
      EXPECT_EQ(d.copies - d.copy_assignments, static_cast<long>(from > to ? from - to : 0));
      EXPECT_EQ(d.destructions, static_cast<long>(to > from ? to - from : 0));
    }
  }
  V a = make<V>(TestFixture::fits);
  V& self = a;
  a = self;
  EXPECT_EQ(values(a), iota(TestFixture::fits));
  typename TestFixture::ivec ia = make<typename TestFixture::ivec>(N), ib;
  ib = ia;
  EXPECT_EQ(ia, ib);
}

TYPED_TEST(InplaceVector, MoveAssignment) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  for (std::size_t from = 0; from <= N; from += (N > 4 ? 4 : 1)) {
    for (std::size_t to = 0; to <= N; to += (N > 4 ? 4 : 1)) {
      V a = make<V>(from, 1);
      V b = make<V>(to, 50);
      const auto before = counts();
      LOWALLOC_EXPECT_NO_ALLOCATIONS(b = std::move(a));
      const auto d = counts() - before;
      EXPECT_EQ(values(b), iota(from, 1));
      EXPECT_EQ(d.copies, 0);
      EXPECT_EQ(d.moves, static_cast<long>(from));
      EXPECT_EQ(d.destructions, static_cast<long>(to > from ? to - from : 0));
    }
  }
  V a = make<V>(TestFixture::fits);
  V& self = a;
  a = std::move(self);
  EXPECT_EQ(values(a), iota(TestFixture::fits));
}

TYPED_TEST(InplaceVector, Assign) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  constexpr std::size_t K = TestFixture::fits;
  const std::vector<int> src = iota(N + 1, 20);
  const std::vector<int> first_n = iota(N, 20);
  const std::list<int> list(src.begin(), src.end());
  V v = make<V>(K);
  const counted nine(9);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.assign(N, nine));
  EXPECT_EQ(values(v), std::vector<int>(N, 9));
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.assign(K / 2, nine));
  EXPECT_EQ(values(v), std::vector<int>(K / 2, 9));

  LOWALLOC_EXPECT_NO_ALLOCATIONS(
      v.assign(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(N)));
  EXPECT_EQ(values(v), iota(N, 20));
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.assign(in(src.data()), in(src.data() + K)));
  EXPECT_EQ(values(v), iota(K, 20));
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.assign(in(src.data() + 1), in(src.data() + 1 + N)));
  EXPECT_EQ(values(v), iota(N, 21));
  v.assign(list.begin(), std::next(list.begin(), static_cast<std::ptrdiff_t>(K)));
  EXPECT_EQ(values(v), iota(K, 20));
  if constexpr (N >= 2) {
    LOWALLOC_EXPECT_NO_ALLOCATIONS(v.assign({counted(1), counted(2)}));
    EXPECT_EQ(values(v), (std::vector<int>{1, 2}));
    LOWALLOC_EXPECT_NO_ALLOCATIONS(v = {counted(3)});
    EXPECT_EQ(values(v), (std::vector<int>{3}));
  }
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.assign_range(first_n));
  EXPECT_EQ(values(v), first_n);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.assign_range(std::array<int, 0>{}));
  EXPECT_TRUE(v.empty());

  // Too many: no effect when the count is known, std::bad_alloc either way.
  v = make<V>(K);
  EXPECT_THROW(v.assign(N + 1, nine), std::bad_alloc);
  EXPECT_EQ(values(v), iota(K));
  EXPECT_THROW(v.assign(src.begin(), src.end()), std::bad_alloc);
  EXPECT_EQ(values(v), iota(K));
  EXPECT_THROW(v.assign(list.begin(), list.end()), std::bad_alloc);
  EXPECT_EQ(values(v), iota(K));
  EXPECT_THROW(v.assign_range(src), std::bad_alloc);
  EXPECT_EQ(values(v), iota(K));
  EXPECT_THROW(v.assign(in(src.data()), in(src.data() + src.size())), std::bad_alloc);
  EXPECT_LE(v.size(), N);
}

TYPED_TEST(InplaceVector, AssignAliasingValue) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  if constexpr (N >= 2) {
    V v = make<V>(2, 1);  // {1, 2}
    v.assign(N, v[1]);
    EXPECT_EQ(values(v), std::vector<int>(N, 2));
    v = make<V>(N, 1);
    v.assign(1, v.back());
    EXPECT_EQ(values(v), std::vector<int>{static_cast<int>(N)});
  }
}

TYPED_TEST(InplaceVector, ElementAccess) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  V v = make<V>(N, 1);
  const V& c = v;
  LOWALLOC_EXPECT_NO_ALLOCATIONS(for (std::size_t i = 0; i < N; ++i) {
    EXPECT_EQ(v[i].value(), static_cast<int>(i) + 1);
    EXPECT_EQ(c[i].value(), static_cast<int>(i) + 1);
    EXPECT_EQ(v.at(i).value(), static_cast<int>(i) + 1);
    EXPECT_EQ(c.at(i).value(), static_cast<int>(i) + 1);
    EXPECT_EQ(&v[i], v.data() + i);
  });
  EXPECT_EQ(c.data(), v.data());
  if constexpr (N > 0) {
    EXPECT_EQ(v.front().value(), 1);
    EXPECT_EQ(c.front().value(), 1);
    EXPECT_EQ(v.back().value(), static_cast<int>(N));
    EXPECT_EQ(c.back().value(), static_cast<int>(N));
    v.front() = counted(-5);
    v.back() = counted(-6);
    EXPECT_EQ(v[0].value(), N == 1 ? -6 : -5);
    v.at(0) = counted(3);
    EXPECT_EQ(c.at(0).value(), 3);
  } else {
    EXPECT_EQ(v.data(), nullptr);
  }
  EXPECT_THROW(v.at(N), std::out_of_range);
  EXPECT_THROW(c.at(N + 100), std::out_of_range);
}

TYPED_TEST(InplaceVector, Iterators) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  V v = make<V>(N);
  const V& c = v;
  EXPECT_EQ(static_cast<std::size_t>(v.end() - v.begin()), N);
  EXPECT_EQ(static_cast<std::size_t>(c.end() - c.begin()), N);
  EXPECT_EQ(v.cbegin(), c.begin());
  EXPECT_EQ(v.cend(), c.end());
  EXPECT_EQ(v.begin(), v.data());
  std::vector<int> forward, backward, const_backward;
  for (auto it = v.begin(); it != v.end(); ++it) forward.push_back(it->value());
  for (auto it = v.rbegin(); it != v.rend(); ++it) backward.push_back(it->value());
  for (auto it = c.crbegin(); it != c.crend(); ++it) const_backward.push_back(it->value());
  EXPECT_EQ(forward, iota(N));
  std::reverse(forward.begin(), forward.end());
  EXPECT_EQ(backward, forward);
  EXPECT_EQ(const_backward, forward);
  EXPECT_EQ(c.rbegin().base(), c.end());
  EXPECT_EQ(c.rend().base(), c.begin());
  for (auto& e : v) e = counted(e.value() * 2);
  std::sort(v.rbegin(), v.rend());  // descending
  EXPECT_TRUE(std::is_sorted(v.rbegin(), v.rend()));
  static_assert(std::is_same<decltype(c.begin()), typename V::const_iterator>::value, "");
  static_assert(std::is_same<decltype(v.crbegin()), typename V::const_reverse_iterator>::value, "");
}

TYPED_TEST(InplaceVector, Resize) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  V v;
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.resize(N));
  EXPECT_EQ(v.size(), N);
  EXPECT_EQ(counts().default_constructions, static_cast<long>(N));
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.resize(N / 2));
  EXPECT_EQ(v.size(), N / 2);
  EXPECT_EQ(counts().destructions, static_cast<long>(N - N / 2));
  const counted five(5);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.resize(N, five));
  EXPECT_EQ(v.size(), N);
  for (std::size_t i = N / 2; i < N; ++i) EXPECT_EQ(v[i].value(), 5);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.resize(0, five); v.resize(0));
  EXPECT_TRUE(v.empty());

  v = make<V>(TestFixture::fits);
  EXPECT_THROW(v.resize(N + 1), std::bad_alloc);
  EXPECT_THROW(v.resize(N + 1, five), std::bad_alloc);
  EXPECT_EQ(values(v), iota(TestFixture::fits)) << "no effect";

  typename TestFixture::ivec iv = make<typename TestFixture::ivec>(TestFixture::fits, 1);
  iv.resize(N);
  for (std::size_t i = TestFixture::fits; i < N; ++i) EXPECT_EQ(iv[i], 0) << "value-initialised";

  if constexpr (N >= 2) {  // the value may be an element
    v = make<V>(1, 42);
    v.resize(N, v[0]);
    EXPECT_EQ(values(v), std::vector<int>(N, 42));
  }
}

TYPED_TEST(InplaceVector, PushBackAndEmplaceBack) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  V v;
  const counted c(1);
  for (std::size_t i = 0; i < N; ++i) {
    const auto before = counts();
    counted* p = nullptr;
    switch (i % 3) {
      case 0:
        LOWALLOC_EXPECT_NO_ALLOCATIONS(p = &v.push_back(c));
        EXPECT_EQ((counts() - before).copies, 1);
        break;
      case 1:
        LOWALLOC_EXPECT_NO_ALLOCATIONS(p = &v.push_back(counted(1)));
        EXPECT_EQ((counts() - before).copies, 0);
        EXPECT_EQ((counts() - before).moves, 1);
        break;
      default:
        LOWALLOC_EXPECT_NO_ALLOCATIONS(p = &v.emplace_back(1));
        EXPECT_EQ((counts() - before).constructions, 1);
        break;
    }
    EXPECT_EQ(p, &v.back());
    EXPECT_EQ(v.size(), i + 1);
  }
  // Full: std::bad_alloc, no effect, the argument not moved from.
  const auto before = counts();
  counted arg(77);
  EXPECT_THROW(v.push_back(c), std::bad_alloc);
  EXPECT_THROW(v.push_back(std::move(arg)), std::bad_alloc);
  EXPECT_THROW(v.emplace_back(3), std::bad_alloc);
  EXPECT_EQ(arg.value(), 77);
  EXPECT_EQ(v.size(), N);
  EXPECT_EQ(values(v), std::vector<int>(N, 1));
  EXPECT_EQ((counts() - before).constructions, 1);  // arg only
}

TYPED_TEST(InplaceVector, PushBackAliasing) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  if constexpr (N >= 1) {
    V v = make<V>(N - 1, 1);
    if (!v.empty()) {
      v.push_back(v[0]);
      EXPECT_EQ(v.back().value(), 1);
    } else {
      v.push_back(counted(1));
    }
    const std::vector<int> full = values(v);
    EXPECT_THROW(v.push_back(v[0]), std::bad_alloc);
    EXPECT_THROW(v.emplace_back(v.back()), std::bad_alloc);
    EXPECT_EQ(values(v), full);
  }
  if constexpr (N >= 2) {
    V v = make<V>(N - 1, 1);
    v.emplace_back(v.back());
    EXPECT_EQ(v.back().value(), static_cast<int>(N - 1));
  }
}

TYPED_TEST(InplaceVector, TryPushBack) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  V v;
  const counted c(4);
  for (std::size_t i = 0; i < N; ++i) {
    counted* p = nullptr;
    if (i % 3 == 0) {
      LOWALLOC_EXPECT_NO_ALLOCATIONS(p = v.try_push_back(c));
    } else if (i % 3 == 1) {
      counted m(4);
      LOWALLOC_EXPECT_NO_ALLOCATIONS(p = v.try_push_back(std::move(m)));
      EXPECT_EQ(m.value(), -1) << "moved from when it fits";
    } else {
      LOWALLOC_EXPECT_NO_ALLOCATIONS(p = v.try_emplace_back(4));
    }
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p, &v.back());
  }
  counted arg(99);
  const auto before = counts();
  LOWALLOC_EXPECT_NO_ALLOCATIONS(EXPECT_EQ(v.try_push_back(std::move(arg)), nullptr);
                                 EXPECT_EQ(v.try_push_back(c), nullptr);
                                 EXPECT_EQ(v.try_emplace_back(5), nullptr);
                                 EXPECT_EQ(v.try_emplace_back(std::move(arg)), nullptr));
  EXPECT_EQ(arg.value(), 99) << "not moved from when full";
  EXPECT_EQ((counts() - before).constructions, 0);
  EXPECT_EQ((counts() - before).moves, 0);
  EXPECT_EQ(values(v), std::vector<int>(N, 4));
}

TYPED_TEST(InplaceVector, UncheckedPushBack) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  V v;
  const counted c(2);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(for (std::size_t i = 0; i < N; ++i) {
    counted& r = i % 3 == 0   ? v.unchecked_push_back(c)
                 : i % 3 == 1 ? v.unchecked_push_back(counted(2))
                              : v.unchecked_emplace_back(2);
    EXPECT_EQ(&r, &v.back());
  });
  EXPECT_EQ(values(v), std::vector<int>(N, 2));
}

TYPED_TEST(InplaceVector, PopBack) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  V v = make<V>(N);
  const auto before = counts();
  LOWALLOC_EXPECT_NO_ALLOCATIONS(while (!v.empty()) v.pop_back());
  EXPECT_EQ((counts() - before).destructions, static_cast<long>(N));
}

TYPED_TEST(InplaceVector, InsertOne) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  if constexpr (N >= 1) {
    for (std::size_t pos = 0; pos < N; ++pos) {
      V v = make<V>(N - 1, 1);
      std::vector<int> expected = iota(N - 1, 1);
      expected.insert(expected.begin() + static_cast<std::ptrdiff_t>(pos), 100);
      typename V::iterator it{};
      switch (pos % 3) {
        case 0: {
          const counted x(100);
          const auto before = counts();
          LOWALLOC_EXPECT_NO_ALLOCATIONS(it = v.insert(v.cbegin() + pos, x));
          EXPECT_EQ((counts() - before).copies, 1);
          break;
        }
        case 1: {
          counted x(100);
          LOWALLOC_EXPECT_NO_ALLOCATIONS(it = v.insert(v.cbegin() + pos, std::move(x)));
          break;
        }
        default:
          LOWALLOC_EXPECT_NO_ALLOCATIONS(it = v.emplace(v.cbegin() + pos, 100));
          break;
      }
      EXPECT_EQ(it, v.begin() + pos);
      EXPECT_EQ(values(v), expected);
      // Full now: no effect, the argument untouched.
      counted arg(5);
      EXPECT_THROW(v.insert(v.begin(), std::move(arg)), std::bad_alloc);
      EXPECT_THROW(v.insert(v.end(), arg), std::bad_alloc);
      EXPECT_THROW(v.emplace(v.begin() + pos, 5), std::bad_alloc);
      EXPECT_EQ(arg.value(), 5);
      EXPECT_EQ(values(v), expected);
    }
  } else {
    V v;
    EXPECT_THROW(v.insert(v.begin(), counted(1)), std::bad_alloc);
    EXPECT_THROW(v.emplace(v.end()), std::bad_alloc);
  }
}

TYPED_TEST(InplaceVector, InsertOneAliasing) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  if constexpr (N >= 2) {
    V v = make<V>(N - 1, 1);
    v.insert(v.begin(), v.back());
    std::vector<int> expected = iota(N - 1, 1);
    expected.insert(expected.begin(), static_cast<int>(N - 1));
    EXPECT_EQ(values(v), expected);
    EXPECT_THROW(v.insert(v.begin(), v.back()), std::bad_alloc);
    EXPECT_EQ(values(v), expected);

    V w = make<V>(N - 1, 1);
    w.emplace(w.begin(), w[N / 2 - 1]);
    EXPECT_EQ(w.front().value(), static_cast<int>(N / 2));
  }
}

TYPED_TEST(InplaceVector, InsertCount) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  const counted x(9);
  for (std::size_t size = 0; size <= N; size += (N > 4 ? 3 : 1)) {
    for (std::size_t pos = 0; pos <= size; pos += (N > 4 ? 2 : 1)) {
      const std::size_t n = N - size;
      V v = make<V>(size);
      std::vector<int> expected = iota(size);
      expected.insert(expected.begin() + static_cast<std::ptrdiff_t>(pos), n, 9);
      const auto before = counts();
      typename V::iterator it{};
      LOWALLOC_EXPECT_NO_ALLOCATIONS(it = v.insert(v.begin() + pos, n, x));
      EXPECT_EQ((counts() - before).copies - (counts() - before).copy_assignments,
                static_cast<long>(n));
      EXPECT_EQ(it, v.begin() + pos);
      EXPECT_EQ(values(v), expected);
      EXPECT_THROW(v.insert(v.begin() + pos, 1, x), std::bad_alloc);
      EXPECT_EQ(values(v), expected);
      LOWALLOC_EXPECT_NO_ALLOCATIONS(it = v.insert(v.begin() + pos, 0, x));
      EXPECT_EQ(it, v.begin() + pos);
    }
  }
  if constexpr (N >= 2) {  // the value is an element
    V v = make<V>(2, 1);
    v.insert(v.begin(), N - 2, v.back());
    std::vector<int> expected(N - 2, 2);
    expected.push_back(1);
    expected.push_back(2);
    EXPECT_EQ(values(v), expected);
  }
}

TYPED_TEST(InplaceVector, InsertRange) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  const std::vector<int> src = iota(N + 1, 100);
  const std::list<int> list(src.begin(), src.end());
  for (std::size_t size = 0; size <= N; size += (N > 4 ? 3 : 1)) {
    for (std::size_t pos = 0; pos <= size; pos += (N > 4 ? 2 : 1)) {
      const std::size_t n = N - size;
      const auto count = static_cast<std::ptrdiff_t>(n);
      std::vector<int> expected = iota(size);
      expected.insert(expected.begin() + static_cast<std::ptrdiff_t>(pos), src.begin(),
                      src.begin() + count);
      for (int kind = 0; kind < 4; ++kind) {
        V v = make<V>(size);
        typename V::iterator it{};
        switch (kind) {
          case 0:
            LOWALLOC_EXPECT_NO_ALLOCATIONS(
                it = v.insert(v.begin() + pos, src.begin(), src.begin() + count));
            break;
          case 1:
            LOWALLOC_EXPECT_NO_ALLOCATIONS(
                it = v.insert(v.begin() + pos, in(src.data()), in(src.data() + n)));
            break;
          case 2:
            LOWALLOC_EXPECT_NO_ALLOCATIONS(
                it = v.insert(v.begin() + pos, list.begin(), std::next(list.begin(), count)));
            break;
          default:
            LOWALLOC_EXPECT_NO_ALLOCATIONS(
                it = v.insert_range(v.begin() + pos, sentinel_range{src.data(), src.data() + n}));
            break;
        }
        EXPECT_EQ(it, v.begin() + pos);
        EXPECT_EQ(values(v), expected) << "kind " << kind;
        // One more does not fit: no effect, whatever the iterator kind.
        EXPECT_THROW(v.insert(v.begin() + pos, src.begin(), src.begin() + 1), std::bad_alloc);
        EXPECT_THROW(v.insert(v.begin() + pos, in(src.data()), in(src.data() + 1)), std::bad_alloc);
        EXPECT_THROW(v.insert_range(v.begin(), list), std::bad_alloc);
        EXPECT_EQ(values(v), expected);
      }
    }
  }
  if constexpr (N >= 2) {
    V v = make<V>(N - 2, 1);
    LOWALLOC_EXPECT_NO_ALLOCATIONS(v.insert(v.begin() + (N > 2 ? 1 : 0), {counted(7), counted(8)}));
    std::vector<int> expected = iota(N - 2, 1);
    expected.insert(expected.begin() + (N > 2 ? 1 : 0), {7, 8});
    EXPECT_EQ(values(v), expected);
    EXPECT_THROW(v.insert(v.end(), {counted(9)}), std::bad_alloc);
    EXPECT_EQ(values(v), expected);
  }
}

TYPED_TEST(InplaceVector, InsertRangeAliasing) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  for (std::size_t size = 1; size <= N; ++size) {
    for (std::size_t pos = 0; pos <= size; pos += (size > 4 ? size / 4 : 1)) {
      V v = make<V>(size, 1);
      const std::vector<int> before = values(v);
      if (2 * size <= N) {
        std::vector<int> expected = before;
        expected.insert(expected.begin() + static_cast<std::ptrdiff_t>(pos), before.begin(),
                        before.end());
        v.insert(v.begin() + pos, v.begin(), v.end());
        EXPECT_EQ(values(v), expected);
        V w = make<V>(size, 1);
        w.insert_range(w.begin() + pos, w);
        EXPECT_EQ(values(w), expected);
      } else {
        EXPECT_THROW(v.insert(v.begin() + pos, v.begin(), v.end()), std::bad_alloc);
        EXPECT_THROW(v.insert_range(v.begin() + pos, v), std::bad_alloc);
        EXPECT_EQ(values(v), before) << "no effect";
      }
    }
  }
}

TYPED_TEST(InplaceVector, AppendRange) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  constexpr std::size_t K = TestFixture::fits;
  const std::vector<int> src = iota(N + 1, 10);
  V v = make<V>(K);
  const std::vector<int> tail(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(N - K));
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.append_range(tail));
  std::vector<int> expected = iota(K);
  expected.insert(expected.end(), tail.begin(), tail.end());
  EXPECT_EQ(values(v), expected);

  // A forward range that does not fit: std::bad_alloc before anything.
  EXPECT_THROW(v.append_range(std::array<int, 1>{{1}}), std::bad_alloc);
  EXPECT_EQ(values(v), expected);

  // C arrays, sentinel ranges, input ranges.
  V w;
  const int arr[] = {5};
  if constexpr (N >= 1) {
    LOWALLOC_EXPECT_NO_ALLOCATIONS(w.append_range(arr));
    LOWALLOC_EXPECT_NO_ALLOCATIONS(
        w.append_range(sentinel_range{src.data(), src.data() + (N - 1) / 2}));
    std::vector<int> e = iota((N - 1) / 2, 10);
    e.insert(e.begin(), 5);
    EXPECT_EQ(values(w), e);
    w.clear();
    LOWALLOC_EXPECT_NO_ALLOCATIONS(w.append_range(input_range{&tail}));
    EXPECT_EQ(values(w), tail);
  }
  // An input range that does not fit: as std, the elements appended before the throw stay.
  w.clear();
  EXPECT_THROW(w.append_range(input_range{&src}), std::bad_alloc);
  EXPECT_EQ(values(w), iota(N, 10));
  w.clear();
  EXPECT_THROW(w.append_range(sentinel_range{src.data(), src.data() + src.size()}), std::bad_alloc);
  EXPECT_EQ(values(w), iota(N, 10));
}

TYPED_TEST(InplaceVector, TryAppendRange) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  constexpr std::size_t K = TestFixture::fits;
  const std::vector<int> src = iota(N + 2, 10);
  V v = make<V>(K);
  auto it = src.begin();
  LOWALLOC_EXPECT_NO_ALLOCATIONS(it = v.try_append_range(src));
  EXPECT_EQ(static_cast<std::size_t>(it - src.begin()), N - K);
  EXPECT_EQ(v.size(), N);
  std::vector<int> expected = iota(K);
  expected.insert(expected.end(), src.begin(), src.begin() + static_cast<std::ptrdiff_t>(N - K));
  EXPECT_EQ(values(v), expected);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(it = v.try_append_range(src));
  EXPECT_EQ(it, src.begin()) << "full: nothing appended";

  V w;
  const std::vector<int> one{1};
  auto it1 = w.try_append_range(one);
  EXPECT_EQ(it1, N == 0 ? one.begin() : one.end());
  const sentinel_range sr{src.data(), src.data() + 2};
  const std::size_t room = N - w.size();
  const int* p = w.try_append_range(sr);
  EXPECT_EQ(p, src.data() + std::min<std::size_t>(2, room));
  EXPECT_EQ(w.size(), std::min<std::size_t>(N, 3));
  const input_range ir{&src};
  w.clear();
  auto in_it = w.try_append_range(ir);
  EXPECT_EQ(values(w), iota(N, 10));
  EXPECT_EQ(*in_it, src[N]) << "each element read at most once; the next is returned";
#if LOWALLOC_HAS_RANGES
  static_assert(
      std::is_same<decltype(w.try_append_range(std::vector<int>{})), std::ranges::dangling>::value,
      "a temporary range's iterator is not returned");
#endif
}

TYPED_TEST(InplaceVector, Erase) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  for (std::size_t first = 0; first < N; first += (N > 4 ? 3 : 1)) {
    V v = make<V>(N);
    std::vector<int> expected = iota(N);
    expected.erase(expected.begin() + static_cast<std::ptrdiff_t>(first));
    typename V::iterator it{};
    const auto before = counts();
    LOWALLOC_EXPECT_NO_ALLOCATIONS(it = v.erase(v.cbegin() + first));
    EXPECT_EQ((counts() - before).destructions, 1);
    EXPECT_EQ((counts() - before).copies, 0);
    EXPECT_EQ(it, v.begin() + first);
    EXPECT_EQ(values(v), expected);
    for (std::size_t last = first; last <= v.size(); last += (N > 4 ? 4 : 1)) {
      V w = v;
      std::vector<int> e2 = expected;
      e2.erase(e2.begin() + static_cast<std::ptrdiff_t>(first),
               e2.begin() + static_cast<std::ptrdiff_t>(last));
      LOWALLOC_EXPECT_NO_ALLOCATIONS(it = w.erase(w.cbegin() + first, w.cbegin() + last));
      EXPECT_EQ(it, w.begin() + first);
      EXPECT_EQ(values(w), e2);
    }
  }
  V v = make<V>(N);
  const auto all = v.erase(v.begin(), v.end());
  EXPECT_EQ(all, v.end());
  EXPECT_TRUE(v.empty());
  const auto none = v.erase(v.begin(), v.begin());
  EXPECT_EQ(none, v.begin());
}

TYPED_TEST(InplaceVector, Clear) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  V v = make<V>(N);
  const auto before = counts();
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.clear());
  EXPECT_TRUE(v.empty());
  EXPECT_EQ((counts() - before).destructions, static_cast<long>(N));
  v.clear();
  EXPECT_TRUE(v.empty());
  static_assert(noexcept(v.clear()), "");
}

TYPED_TEST(InplaceVector, Swap) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  for (std::size_t a_size = 0; a_size <= N; a_size += (N > 4 ? 5 : 1)) {
    for (std::size_t b_size = 0; b_size <= N; b_size += (N > 4 ? 7 : 1)) {
      V a = make<V>(a_size, 1);
      V b = make<V>(b_size, 100);
      LOWALLOC_EXPECT_NO_ALLOCATIONS(a.swap(b));
      EXPECT_EQ(values(a), iota(b_size, 100));
      EXPECT_EQ(values(b), iota(a_size, 1));
      using std::swap;
      LOWALLOC_EXPECT_NO_ALLOCATIONS(swap(a, b));  // the hidden friend, found by ADL
      EXPECT_EQ(values(a), iota(a_size, 1));
      EXPECT_EQ(values(b), iota(b_size, 100));
      a.swap(a);
      EXPECT_EQ(values(a), iota(a_size, 1));
    }
  }
}

TYPED_TEST(InplaceVector, Comparison) {
  using IV = typename TestFixture::ivec;
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  const IV empty;
  const IV a = make<IV>(N);
  IV b = a;
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a != b);
  EXPECT_FALSE(a < b);
  EXPECT_TRUE(a <= b);
  EXPECT_FALSE(a > b);
  EXPECT_TRUE(a >= b);
  EXPECT_EQ(empty == a, N == 0);
  EXPECT_EQ(empty<a, N> 0);
  EXPECT_EQ(a > empty, N > 0);
  if constexpr (N > 0) {
    b.back() += 1;  // same size, larger last element
    EXPECT_TRUE(a != b);
    EXPECT_TRUE(a < b);
    EXPECT_TRUE(a <= b);
    EXPECT_TRUE(b > a);
    EXPECT_TRUE(b >= a);
    EXPECT_FALSE(b < a);
    IV shorter = a;
    shorter.pop_back();  // a prefix is less
    EXPECT_TRUE(shorter < a);
    EXPECT_TRUE(shorter != a);
    IV bigger_first = shorter;
    if (!bigger_first.empty()) {
      bigger_first[0] = 1000;
      EXPECT_TRUE(a < bigger_first) << "the first difference decides, not the size";
    }
  }
  // Elements with only == and <.
  const V ca = make<V>(N), cb = make<V>(N);
  EXPECT_TRUE(ca == cb);
  EXPECT_FALSE(ca < cb);
  EXPECT_TRUE(ca >= cb);
#if LOWALLOC_HAS_THREE_WAY_COMPARISON
  static_assert(std::is_same<decltype(a <=> b), std::strong_ordering>::value, "int's <=>");
  static_assert(std::is_same<decltype(ca <=> cb), std::weak_ordering>::value,
                "synthesised from counted's <");
  EXPECT_EQ(a <=> a, std::strong_ordering::equal);
  EXPECT_EQ(empty <=> a, N == 0 ? std::strong_ordering::equal : std::strong_ordering::less);
  EXPECT_EQ(ca <=> cb, std::weak_ordering::equivalent);
  if constexpr (N > 0) {
    EXPECT_EQ(a <=> b, std::strong_ordering::less);
    EXPECT_EQ(b <=> a, std::strong_ordering::greater);
  }
#endif
}

TYPED_TEST(InplaceVector, EraseAndEraseIf) {
  using V = typename TestFixture::vec;
  constexpr std::size_t N = TestFixture::cap;
  V v = make<V>(N);
  for (auto& e : v) e = counted(e.value() % 3);
  std::vector<int> expected;
  for (int x : values(v)) {
    if (x != 1) expected.push_back(x);
  }
  std::size_t n = 0;
  LOWALLOC_EXPECT_NO_ALLOCATIONS(n = erase(v, counted(1)));  // ADL
  EXPECT_EQ(n, N - expected.size());
  EXPECT_EQ(values(v), expected);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(n = lowalloc::erase(v, 1));  // U != T
  EXPECT_EQ(n, 0u);
  std::vector<int> no_zeros;
  for (int x : expected) {
    if (x != 0) no_zeros.push_back(x);
  }
  LOWALLOC_EXPECT_NO_ALLOCATIONS(n = erase_if(v, [](const counted& c) { return c.value() == 0; }));
  EXPECT_EQ(n, expected.size() - no_zeros.size());
  EXPECT_EQ(values(v), no_zeros);
  EXPECT_EQ(lowalloc::erase_if(v, [](const counted&) { return true; }), no_zeros.size());
  EXPECT_TRUE(v.empty());
}

// --- exception safety: `throwing` elements, the k-th copy or move throws, for every k ---------

template <class Capacity>
class InplaceVectorExceptions : public InplaceVector<Capacity> {
 public:
  using wvec = inplace_vector<throwing, Capacity::value>;
};
using nonzero_capacities = ::testing::Types<capacity<1>, capacity<2>, capacity<8>>;
TYPED_TEST_SUITE(InplaceVectorExceptions, nonzero_capacities, capacity_name);

template <class W>
W make_throwing(std::size_t n, int start = 0) {
  W w;
  for (std::size_t i = 0; i < n; ++i) w.emplace_back(start + static_cast<int>(i));
  return w;
}

// Runs `op` on a copy of `start` with the k-th next copy or move throwing, k = 0, 1, ... until
// it succeeds; after each failure calls `check(copy)`. Returns how many runs threw.
template <class W, class Op, class Check>
int for_each_failure(const W& start, Op op, Check check) {
  int failures = 0;
  for (long k = 0; k < 1000; ++k) {
    W w = start;
    const long live_before = counts().live();
    throw_after(k);
    bool threw = false;
    try {
      op(w);
    } catch (const test_exception&) {
      threw = true;
    }
    never_throw();
    if (!threw) break;
    ++failures;
    EXPECT_LE(w.size(), W::capacity());
    for (const auto& e : w) (void)e.value();
    EXPECT_EQ(counts().live(),
              live_before - static_cast<long>(start.size()) + static_cast<long>(w.size()))
        << "every element is either in the container or destroyed (k = " << k << ")";
    check(w);
  }
  return failures;
}

TYPED_TEST(InplaceVectorExceptions, StrongAppend) {
  using W = typename TestFixture::wvec;
  constexpr std::size_t N = TestFixture::cap;
  for (std::size_t size = 0; size < N; ++size) {
    const W start = make_throwing<W>(size, 1);
    const throwing x(50);
    auto unchanged = [&](const W& w) { EXPECT_EQ(w, start); };
    EXPECT_EQ(for_each_failure(
                  start, [&](W& w) { w.push_back(x); }, unchanged),
              1);
    EXPECT_EQ(for_each_failure(
                  start, [&](W& w) { w.push_back(throwing(50)); }, unchanged),
              2);
    EXPECT_EQ(for_each_failure(
                  start, [&](W& w) { w.emplace_back(50); }, unchanged),
              1);
    EXPECT_EQ(for_each_failure(
                  start, [&](W& w) { (void)w.try_push_back(x); }, unchanged),
              1);
    EXPECT_EQ(for_each_failure(
                  start, [&](W& w) { w.unchecked_push_back(x); }, unchanged),
              1);
    EXPECT_GE(for_each_failure(
                  start, [&](W& w) { w.insert(w.end(), x); }, unchanged),
              1);
    EXPECT_GE(for_each_failure(
                  start, [&](W& w) { w.emplace(w.end(), 50); }, unchanged),
              1);
    EXPECT_GE(for_each_failure(
                  start, [&](W& w) { w.resize(N, x); }, unchanged),
              1);
    // Inserting in the middle: the new element is made before anything moves.
    if (size > 0) {
      for_each_failure(
          start, [&](W& w) { w.insert(w.begin(), x); }, [](const W&) {});
      W w = start;
      throw_after(0);
      EXPECT_THROW(w.insert(w.begin(), x), test_exception);
      never_throw();
      EXPECT_EQ(w, start) << "the copy of the argument failed: no effect";
    }
  }
}

TYPED_TEST(InplaceVectorExceptions, BasicInsertAndErase) {
  using W = typename TestFixture::wvec;
  constexpr std::size_t N = TestFixture::cap;
  const std::vector<int> src = iota(N, 100);
  for (std::size_t size = 0; size <= N; ++size) {
    const W start = make_throwing<W>(size, 1);
    const std::size_t room = N - size;
    const throwing x(50);
    auto any = [](const W&) {};
    auto unchanged = [&](const W& w) { EXPECT_EQ(w, start); };
    for (std::size_t pos = 0; pos <= size; ++pos) {
      if (room > 0) {
        for_each_failure(
            start, [&](W& w) { w.insert(w.begin() + pos, x); }, any);
        for_each_failure(
            start, [&](W& w) { w.insert(w.begin() + pos, throwing(50)); }, any);
        for_each_failure(
            start, [&](W& w) { w.emplace(w.begin() + pos, 50); }, any);
      }
      for_each_failure(
          start, [&](W& w) { w.insert(w.begin() + pos, room, x); }, any);
      for_each_failure(
          start,
          [&](W& w) {
            w.insert(w.begin() + pos, src.begin(), src.begin() + static_cast<std::ptrdiff_t>(room));
          },
          any);
      for_each_failure(
          start, [&](W& w) { w.insert(w.begin() + pos, in(src.data()), in(src.data() + room)); },
          any);
      if (pos < size) {
        for_each_failure(
            start, [&](W& w) { w.erase(w.begin() + pos); }, any);
        for_each_failure(
            start, [&](W& w) { w.erase(w.begin(), w.begin() + pos + 1); }, any);
      }
    }
    // Appending the new elements is all or nothing: only if that fails is there no effect.
    if (room > 0 && size > 0) {
      W w = start;
      throw_after(0);
      EXPECT_THROW(
          w.insert(w.begin(), src.begin(), src.begin() + static_cast<std::ptrdiff_t>(room)),
          test_exception);
      never_throw();
      unchanged(w);
    }
  }
}

TYPED_TEST(InplaceVectorExceptions, BasicAssignCopySwap) {
  using W = typename TestFixture::wvec;
  constexpr std::size_t N = TestFixture::cap;
  const std::vector<int> src = iota(N, 100);
  for (std::size_t size = 0; size <= N; ++size) {
    const W start = make_throwing<W>(size, 1);
    auto any = [](const W&) {};
    for (std::size_t n = 0; n <= N; ++n) {
      const W other = make_throwing<W>(n, 200);
      for_each_failure(
          start, [&](W& w) { w = other; }, any);
      for_each_failure(
          start,
          [&](W& w) {
            W tmp = other;
            w = std::move(tmp);
          },
          any);
      for_each_failure(
          start, [&](W& w) { w.assign(n, throwing(7)); }, any);
      for_each_failure(
          start, [&](W& w) { w.assign(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(n)); },
          any);
      for_each_failure(
          start, [&](W& w) { w.assign(in(src.data()), in(src.data() + n)); }, any);
      for_each_failure(
          start,
          [&](W& w) {
            W tmp = other;
            w.swap(tmp);
          },
          any);
      for_each_failure(
          start, [&](W& w) { w.resize(n); }, any);
    }
    // Copy and move construction: no leak when an element throws.
    for_each_failure(
        start, [&](W& w) { W copy(w); }, any);
    for_each_failure(
        start, [&](W& w) { W moved(std::move(w)); }, any);
    for_each_failure(
        start,
        [&](W& w) {
          W built(src.begin(), src.end());
          (void)w;
        },
        any);
    for_each_failure(
        start,
        [&](W& w) {
          W built(in(src.data()), in(src.data() + N));
          (void)w;
        },
        any);
    for_each_failure(
        start, [&](W& w) { W built(N, w.empty() ? throwing(1) : w[0]); }, any);
    const std::vector<int> room(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(N - size));
    for_each_failure(
        start, [&](W& w) { w.append_range(room); }, any);
    for_each_failure(
        start, [&](W& w) { (void)w.try_append_range(src); }, any);
  }
}

TYPED_TEST(InplaceVectorExceptions, AppendRangeKeepsWhatWasAppended) {
  using W = typename TestFixture::wvec;
  constexpr std::size_t N = TestFixture::cap;
  const std::vector<int> src = iota(N, 100);
  for (long k = 0; k < static_cast<long>(N); ++k) {
    W w;
    throw_after(k);
    EXPECT_THROW(w.append_range(src), test_exception);
    never_throw();
    EXPECT_EQ(w.size(), static_cast<std::size_t>(k)) << "as std: k elements appended stay";
    EXPECT_EQ(values(w), iota(static_cast<std::size_t>(k), 100));
  }
}

// --- other element types
// -----------------------------------------------------------------------------

TEST(InplaceVectorMoveOnly, EveryMoveOperation) {
  using V = inplace_vector<move_only, 4>;
  V v;
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.push_back(move_only(1)); v.emplace_back(2);
                                 v.insert(v.begin(), move_only(0)); v.emplace(v.end(), 3));
  EXPECT_EQ(values(v), (std::vector<int>{0, 1, 2, 3}));
  move_only m(9);
  EXPECT_EQ(v.try_push_back(std::move(m)), nullptr);
  EXPECT_EQ(m.value(), 9) << "not moved from when full";
  EXPECT_THROW(v.push_back(std::move(m)), std::bad_alloc);
  EXPECT_THROW(v.insert(v.begin(), std::move(m)), std::bad_alloc);
  EXPECT_EQ(m.value(), 9);
  V w(std::move(v));
  EXPECT_EQ(values(w), (std::vector<int>{0, 1, 2, 3}));
  v = std::move(w);
  v.erase(v.begin() + 1);
  EXPECT_EQ(values(v), (std::vector<int>{0, 2, 3}));
  ASSERT_NE(v.try_push_back(std::move(m)), nullptr);
  EXPECT_EQ(m.value(), -1);
  v.resize(2);
  v.resize(3);
  EXPECT_EQ(values(v), (std::vector<int>{0, 2, 0}));
  swap(v, w);
  EXPECT_EQ(values(w), (std::vector<int>{0, 2, 0}));
  v.clear();
  v.unchecked_emplace_back(5);
  EXPECT_EQ(v.back().value(), 5);
  std::array<move_only, 2> arr{move_only(7), move_only(8)};
  v.insert(v.begin(), std::make_move_iterator(arr.begin()), std::make_move_iterator(arr.end()));
  EXPECT_EQ(values(v).front(), 7);
  EXPECT_EQ(erase_if(v, [](const move_only& x) { return x.value() > 6; }), 2u);
  inplace_vector<move_only, 0> none;
  EXPECT_EQ(none.try_emplace_back(1), nullptr);
}

TEST(InplaceVectorNoDefault, NeedsNoDefaultConstructor) {
  using V = inplace_vector<no_default, 5>;
  V v;
  v.emplace_back(1);
  v.push_back(no_default(2));
  v.insert(v.begin(), no_default(0));
  v.resize(4, no_default(3));
  v.insert(v.end(), 1, no_default(4));
  EXPECT_EQ(values(v), (std::vector<int>{0, 1, 2, 3, 4}));
  V w(v.begin(), v.end());
  EXPECT_TRUE(w == v);
  w.erase(w.begin());
  w.assign(2, no_default(6));
  EXPECT_EQ(values(w), (std::vector<int>{6, 6}));
  w.swap(v);
  EXPECT_EQ(v.size(), 2u);
  EXPECT_EQ(lowalloc::erase(v, no_default(6)), 2u);
  inplace_vector<no_default, 0> none;
  EXPECT_TRUE(none.empty());
  EXPECT_THROW(none.emplace_back(1), std::bad_alloc);
}

template <class V>
void expect_aligned(const V& v) {
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % 64, 0u);
  for (const auto& e : v) EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&e) % 64, 0u);
}

TEST(InplaceVectorOverAligned, ElementsAreAligned) {
  inplace_vector<over_aligned, 3> v{1, 2};
  v.push_back(3);
  expect_aligned(v);
  EXPECT_EQ(values(v), (std::vector<int>{1, 2, 3}));
  auto heap = std::make_unique<inplace_vector<over_aligned, 3>>(v);
  expect_aligned(*heap);
  std::vector<inplace_vector<over_aligned, 1>> many(5, inplace_vector<over_aligned, 1>(1));
  for (const auto& e : many) expect_aligned(e);
  struct holder {
    char c;
    inplace_vector<over_aligned, 2> inner;
  } h{'x', {4, 5}};
  expect_aligned(h.inner);
  EXPECT_EQ(values(h.inner), (std::vector<int>{4, 5}));
}

// --- no allocation, ever
// -------------------------------------------------------------------------------

TEST(InplaceVectorAllocations, AWholeWorkloadAllocatesNothing) {
  inplace_vector<int, 16> v;
  LOWALLOC_EXPECT_NO_ALLOCATIONS(for (int round = 0; round < 100; ++round) {
    v.assign({1, 2, 3});
    v.insert(v.begin() + 1, 4, round);
    v.resize(12);
    v.erase(v.begin(), v.begin() + 2);
    (void)v.try_append_range(std::array<int, 8>{});
    inplace_vector<int, 16> w = v;
    w.swap(v);
    lowalloc::erase_if(v, [](int x) { return x == 0; });
    std::sort(v.begin(), v.end());
  });
  EXPECT_LE(v.size(), 16u);
}

// --- debug checks
// ----------------------------------------------------------------------------------

// The members that are not trivial call T's own; the trivial ones copy the bytes.
TEST(InplaceVectorTriviality, NonTrivialMembersCallTheElementsOwn) {
  calls() = member_calls{};
  inplace_vector<user_copy_assign, 4> a(3), b(2);
  b = a;  // 2 assignments over b's elements, 1 trivial copy construction
  EXPECT_EQ(calls().copy_assigns, 2);
  EXPECT_EQ(b.size(), 3u);
  b = std::move(a);  // trivial
  EXPECT_EQ(calls().copy_assigns, 2);

  calls() = member_calls{};
  inplace_vector<user_move_assign, 4> c(3), d(3);
  d = std::move(c);
  EXPECT_EQ(calls().move_assigns, 3);
  d = c;  // trivial
  EXPECT_EQ(calls().move_assigns, 3);

  calls() = member_calls{};
  inplace_vector<user_copy_construct, 4> e(2);
  inplace_vector<user_copy_construct, 4> f(e);
  EXPECT_EQ(calls().copy_constructs, 2);
  inplace_vector<user_copy_construct, 4> g(std::move(e));  // trivial
  EXPECT_EQ(calls().copy_constructs, 2);
  inplace_vector<user_copy_construct, 4> h(1);
  h = f;  // 1 assignment (trivial), 1 copy construction
  EXPECT_EQ(calls().copy_constructs, 3);
  EXPECT_EQ(g.size() + h.size(), 4u);

  calls() = member_calls{};
  inplace_vector<user_move_construct, 4> i(2);
  inplace_vector<user_move_construct, 4> j(std::move(i));
  EXPECT_EQ(calls().move_constructs, 2);
  inplace_vector<user_move_construct, 4> k(j);  // trivial
  EXPECT_EQ(calls().move_constructs, 2);
  EXPECT_EQ(k.size(), 2u);

  calls() = member_calls{};
  {
    inplace_vector<user_destructor, 4> m(3);
    inplace_vector<user_destructor, 4> n(m);  // trivial copy, 3 more elements to destroy
    m = n;                                    // element-wise: nothing destroyed yet
    EXPECT_EQ(calls().destroys, 0);
    m.pop_back();
    EXPECT_EQ(calls().destroys, 1);
  }
  EXPECT_EQ(calls().destroys, 1 + 2 + 3);
}

// An element whose swap is its own and counts.
struct swap_counted {
  static int swaps;
  int value = 0;
  friend void swap(swap_counted& a, swap_counted& b) noexcept {
    std::swap(a.value, b.value);
    ++swaps;
  }
};
int swap_counted::swaps = 0;

// `using std::swap; swap(a, b)` and std::ranges::swap take inplace_vector's swap (element swaps),
// not the generic std::swap (three whole-vector moves).
TEST(InplaceVectorSwap, FoundByLookupIsTheVectorsOwn) {
  inplace_vector<swap_counted, 4> a(3), b(3);
  a[0].value = 1;
  b[0].value = 2;
  swap_counted::swaps = 0;
  {
    using std::swap;
    swap(a, b);
  }
  EXPECT_EQ(swap_counted::swaps, 3);
  EXPECT_EQ(a[0].value, 2);
#if LOWALLOC_HAS_RANGES
  swap_counted::swaps = 0;
  std::ranges::swap(a, b);
  EXPECT_EQ(swap_counted::swaps, 3);
  EXPECT_EQ(a[0].value, 1);
#endif
  inplace_vector<swap_counted, 0> x, y;
  {
    using std::swap;
    static_assert(noexcept(swap(x, y)), "");
    swap(x, y);
  }
  EXPECT_TRUE(x.empty() && y.empty());
}

TEST(InplaceVectorDeathTest, PreconditionsAreChecked) {
#if LOWALLOC_ASSERTIONS
  inplace_vector<int, 2> v;
  const inplace_vector<int, 2>& c = v;
  EXPECT_DEATH((void)v[0], "lowalloc assertion failed");
  EXPECT_DEATH((void)c[0], "lowalloc assertion failed");
  EXPECT_DEATH((void)v.front(), "lowalloc assertion failed");
  EXPECT_DEATH((void)c.back(), "lowalloc assertion failed");
  EXPECT_DEATH(v.pop_back(), "lowalloc assertion failed");
  v.push_back(1);
  EXPECT_DEATH((void)v[1], "lowalloc assertion failed");
  v.push_back(2);
  EXPECT_DEATH(v.unchecked_push_back(3), "lowalloc assertion failed");
  EXPECT_DEATH(v.unchecked_emplace_back(3), "lowalloc assertion failed");
  inplace_vector<int, 0> none;
  EXPECT_DEATH(none.unchecked_push_back(1), "lowalloc assertion failed");
  EXPECT_DEATH(v.erase(v.end()), "lowalloc assertion failed");
#else
  GTEST_SKIP() << "built without LOWALLOC_ASSERTIONS";
#endif
}

}  // namespace
