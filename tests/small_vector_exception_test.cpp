// small_vector's exception guarantees, tested rather than claimed: every operation runs again and
// again with the k-th element copy/move/construction (lowalloc_test::throwing) or the k-th
// allocation (failing_allocator) throwing, for k = 0, 1, 2, ... until it completes, on vectors of
// sizes just below, at and above the inline capacity N, for N in {0, 1, 2, 8, 33}.
//
//  - strong (no effects on failure: same size, values, capacity and data()): push_back,
//    emplace_back, insert/emplace of one element at the end, reserve, shrink_to_fit, resize;
//  - basic (a valid, destructible vector whose elements all hold values that were put there, and
//    nothing leaked): copy and move construction, copy assignment, assign, insert and emplace in
//    the middle, erase;
//  - max_size(): reserve, resize, assign and insert past it throw std::length_error and change
//    nothing.
//
// After every failure and every test, counts().live() and the allocator's outstanding blocks are
// back where they started: nothing leaks and nothing is destroyed twice.
#include <lowalloc/small_vector.hpp>

#include "support/element_types.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using lowalloc_test::counted;
using lowalloc_test::counts;
using lowalloc_test::throwing;

// ---- an allocator that fails on demand
// -----------------------------------------------------------

struct allocation_control {
  long countdown = -1;  // the countdown-th next allocation throws; -1: none
  long outstanding = 0;
};
allocation_control& allocations() {
  static allocation_control c;
  return c;
}

// Throws std::bad_alloc on the k-th allocation after fail_allocation_after(k). Stateless (always
// equal), and not std::allocator, so small_vector never uses realloc with it.
template <class T>
class failing_allocator {
 public:
  using value_type = T;
  failing_allocator() = default;
  template <class U>
  failing_allocator(const failing_allocator<U>&) noexcept {}  // NOLINT

  T* allocate(std::size_t n) {
    allocation_control& c = allocations();
    if (c.countdown == 0) {
      c.countdown = -1;
      throw std::bad_alloc();
    }
    if (c.countdown > 0) --c.countdown;
    T* p = std::allocator<T>().allocate(n);
    ++c.outstanding;
    return p;
  }
  void deallocate(T* p, std::size_t n) noexcept {
    --allocations().outstanding;
    std::allocator<T>().deallocate(p, n);
  }
  friend bool operator==(const failing_allocator&, const failing_allocator&) { return true; }
  friend bool operator!=(const failing_allocator&, const failing_allocator&) { return false; }
};

enum class fault { element, allocation };
const char* name(fault f) { return f == fault::element ? "element" : "allocation"; }

void arm(fault f, long k) {
  if (f == fault::element) {
    lowalloc_test::throw_after(k);
  } else {
    allocations().countdown = k;
  }
}
void disarm() {
  lowalloc_test::never_throw();
  allocations().countdown = -1;
}

// ---- observing a vector
// --------------------------------------------------------------------------

int value_of(int v) { return v; }
int value_of(const throwing& t) { return t.value(); }
int value_of(const counted& c) { return c.value(); }

template <class V>
std::vector<int> values(const V& v) {
  std::vector<int> out;
  for (const auto& e : v) out.push_back(value_of(e));
  return out;
}

struct snapshot {
  std::vector<int> values;
  std::size_t capacity;
  const void* data;
  bool is_inline;
};
template <class V>
snapshot take(const V& v) {
  return snapshot{values(v), v.capacity(), v.data(), v.is_inline()};
}

// Strong guarantee: nothing observable changed.
template <class V>
::testing::AssertionResult unchanged(const V& v, const snapshot& s) {
  if (values(v) != s.values) {
    return ::testing::AssertionFailure()
           << "the elements changed (size " << v.size() << ", was " << s.values.size() << ")";
  }
  if (v.capacity() != s.capacity) {
    return ::testing::AssertionFailure() << "capacity " << v.capacity() << ", was " << s.capacity;
  }
  if (static_cast<const void*>(v.data()) != s.data || v.is_inline() != s.is_inline) {
    return ::testing::AssertionFailure() << "the storage changed";
  }
  return ::testing::AssertionSuccess();
}

// Basic guarantee: a usable vector whose elements hold values that some operation put there
// (originals 100.., sources 200.., inserted 7 and 8, default 0, moved-from -1).
template <class V>
::testing::AssertionResult valid(const V& v) {
  if (v.size() > v.capacity()) return ::testing::AssertionFailure() << "size > capacity";
  for (const auto& e : v) {
    const int x = value_of(e);
    if (!(x == -1 || x == 0 || x == 7 || x == 8 || (x >= 100 && x < 300))) {
      return ::testing::AssertionFailure() << "an element holds " << x;
    }
  }
  const V copy(v);
  if (values(copy) != values(v)) return ::testing::AssertionFailure() << "copy differs";
  return ::testing::AssertionSuccess();
}

// ---- vectors to start from
// -----------------------------------------------------------------------

// grown: filled by emplace_back (inline up to N, then geometric capacity); full: a heap buffer of
// exactly size() elements (the next insertion reallocates); spare: a heap buffer with room left.
enum class layout { grown, full, spare };
const char* name(layout l) {
  return l == layout::grown ? "grown" : l == layout::full ? "full" : "spare";
}

template <class V>
V make_vector(std::size_t size, layout l) {
  V v;
  if (l == layout::full && size > V::inline_size) v.reserve(size);
  if (l == layout::spare) v.reserve(std::max(size, V::inline_size) + 4);
  for (std::size_t i = 0; i < size; ++i) v.emplace_back(100 + static_cast<int>(i));
  return v;
}

// Sizes just below, at and above the spill point, and some more.
std::vector<std::size_t> sizes_around(std::size_t n) {
  std::vector<std::size_t> s = {0, 1, n, n + 1, n + 2, 2 * n + 3};
  if (n > 0) s.push_back(n - 1);
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

// Runs `op` on a fresh vector from `make()` with the k-th element operation (or allocation)
// failing, for k = 0, 1, 2, ... until `op` completes. After each failure `on_failure(v, before)`
// checks the vector; after the completion `on_success(v, before)`. Either way nothing may leak.
// Returns the number of failures.
template <class Make, class Op, class OnFailure, class OnSuccess>
long every_failure(fault f, Make make, Op op, OnFailure on_failure, OnSuccess on_success) {
  long failures = 0;
  for (long k = 0; k < 10000; ++k) {
    const long live = counts().live();
    const long blocks = allocations().outstanding;
    bool completed = false;
    {
      auto v = make();
      const snapshot before = take(v);
      arm(f, k);
      try {
        op(v);
        completed = true;
      } catch (const lowalloc_test::test_exception&) {
      } catch (const std::bad_alloc&) {
      }
      disarm();
      if (completed) {
        on_success(v, before);
      } else {
        ++failures;
        on_failure(v, before);
      }
    }
    EXPECT_EQ(counts().live(), live) << "objects leaked or destroyed twice; failure at k = " << k;
    EXPECT_EQ(allocations().outstanding, blocks) << "blocks leaked; failure at k = " << k;
    if (completed) return failures;
  }
  ADD_FAILURE() << "the operation never completed";
  return failures;
}

template <class T, std::size_t N>
struct config {
  using type = T;
  static constexpr std::size_t n = N;
  using vec = lowalloc::small_vector<T, N, failing_allocator<T>>;
};

using configs = ::testing::Types<config<throwing, 0>, config<throwing, 1>, config<throwing, 2>,
                                 config<throwing, 8>, config<throwing, 33>, config<counted, 0>,
                                 config<counted, 1>, config<counted, 2>, config<counted, 8>,
                                 config<counted, 33>, config<int, 0>, config<int, 1>,
                                 config<int, 2>, config<int, 8>, config<int, 33>>;
struct config_names {
  template <class C>
  static std::string GetName(int) {
    using T = typename C::type;
    const char* t = std::is_same_v<T, int>       ? "int"
                    : std::is_same_v<T, counted> ? "counted"
                                                 : "throwing";
    return std::string(t) + "_N" + std::to_string(C::n);
  }
};

template <class C>
class SmallVectorExceptions : public ::testing::Test {
 public:
  using element_type = typename C::type;
  using vector_type = typename C::vec;
  static constexpr std::size_t N = C::n;
  static constexpr bool element_faults = std::is_same_v<element_type, throwing>;

  // Runs `op` on every starting vector and with both kinds of fault; `on_failure` and
  // `on_success` as for every_failure. Returns the failures injected per kind of fault.
  template <class Op, class OnFailure, class OnSuccess>
  static std::pair<long, long> run(Op op, OnFailure on_failure, OnSuccess on_success,
                                   std::vector<layout> layouts = {layout::grown, layout::full,
                                                                  layout::spare}) {
    std::pair<long, long> failures{0, 0};
    for (std::size_t size : sizes_around(N)) {
      for (layout l : layouts) {
        for (fault f : {fault::element, fault::allocation}) {
          SCOPED_TRACE(::testing::Message()
                       << "size " << size << ", " << name(l) << ", " << name(f) << " faults");
          const long n = every_failure(
              f, [&] { return make_vector<vector_type>(size, l); }, op, on_failure, on_success);
          (f == fault::element ? failures.first : failures.second) += n;
        }
      }
    }
    return failures;
  }

  static void strong(const vector_type& v, const snapshot& before) {
    EXPECT_TRUE(unchanged(v, before));
  }
  static void basic(const vector_type& v, const snapshot&) { EXPECT_TRUE(valid(v)); }

  // On success: the old elements followed by `added`.
  static auto appended(int added) {
    return [added](const vector_type& v, const snapshot& before) {
      std::vector<int> expected = before.values;
      expected.push_back(added);
      EXPECT_EQ(values(v), expected);
    };
  }

 protected:
  void SetUp() override {
    disarm();
    lowalloc_test::reset_counts();
    allocations() = allocation_control{};
  }
  void TearDown() override {
    disarm();
    EXPECT_EQ(counts().live(), 0) << "objects leaked or destroyed twice";
    EXPECT_EQ(allocations().outstanding, 0) << "blocks leaked";
  }
};
TYPED_TEST_SUITE(SmallVectorExceptions, configs, config_names);

// ---- strong guarantee
// ----------------------------------------------------------------------------

TYPED_TEST(SmallVectorExceptions, PushBackIsStrong) {
  using V = typename TestFixture::vector_type;
  using T = typename TestFixture::element_type;
  const T seven(7);
  const auto f1 = this->run([&](V& v) { v.push_back(seven); }, this->strong, this->appended(7));
  const auto f2 = this->run([](V& v) { v.push_back(T(7)); }, this->strong, this->appended(7));
  this->run([](V& v) { v.emplace_back(7); }, this->strong, this->appended(7));
  // Aliasing: the argument lives in the buffer that growth replaces.
  this->run(
      [](V& v) {
        if (!v.empty())
          v.push_back(v.back());
        else
          v.push_back(T(7));
      },
      this->strong,
      [](const V& v, const snapshot& before) {
        EXPECT_EQ(v.size(), before.values.size() + 1);
        if (v.size() > 1) {
          EXPECT_EQ(value_of(v.back()), before.values.back());
        }
      });
  if (TestFixture::element_faults) {
    EXPECT_GT(f1.first, 0);
    EXPECT_GT(f2.first, 0);
  }
  EXPECT_GT(f1.second, 0);  // the spills and the full heap buffers allocate
}

TYPED_TEST(SmallVectorExceptions, InsertOneAtTheEndIsStrong) {
  using V = typename TestFixture::vector_type;
  using T = typename TestFixture::element_type;
  const T seven(7);
  this->run([&](V& v) { v.insert(v.end(), seven); }, this->strong, this->appended(7));
  this->run([](V& v) { v.insert(v.end(), T(7)); }, this->strong, this->appended(7));
  this->run([](V& v) { v.emplace(v.end(), 7); }, this->strong, this->appended(7));
  this->run([](V& v) { v.insert(v.cend(), 1, T(7)); }, this->strong, this->appended(7));
}

TYPED_TEST(SmallVectorExceptions, ReserveIsStrong) {
  using V = typename TestFixture::vector_type;
  const auto same_elements = [](const V& v, const snapshot& before) {
    EXPECT_EQ(values(v), before.values);
  };
  const auto f = this->run([](V& v) { v.reserve(v.capacity() + 1); }, this->strong, same_elements);
  this->run([](V& v) { v.reserve(2 * v.size() + 5); }, this->strong, same_elements);
  EXPECT_GT(f.second, 0);
  if (TestFixture::element_faults) {
    EXPECT_GT(f.first, 0);
  }
}

TYPED_TEST(SmallVectorExceptions, ShrinkToFitIsStrong) {
  using V = typename TestFixture::vector_type;
  this->run([](V& v) { v.shrink_to_fit(); }, this->strong,
            [](const V& v, const snapshot& before) {
              EXPECT_EQ(values(v), before.values);
              if (v.size() <= TestFixture::N) {
                EXPECT_TRUE(v.is_inline());
              } else {
                EXPECT_EQ(v.capacity(), v.size());
              }
            });
}

// std::vector::resize has no effects when an exception is thrown (other than by the move
// constructor of a non-copyable T); small_vector documents no difference.
TYPED_TEST(SmallVectorExceptions, ResizeGrowthIsStrong) {
  using V = typename TestFixture::vector_type;
  using T = typename TestFixture::element_type;
  const T eight(8);
  const auto grown_by = [](std::size_t extra, int fill) {
    return [extra, fill](const V& v, const snapshot& before) {
      std::vector<int> expected = before.values;
      expected.resize(before.values.size() + extra, fill);
      EXPECT_EQ(values(v), expected);
    };
  };
  this->run([](V& v) { v.resize(v.size() + 3); }, this->strong, grown_by(3, 0));
  this->run([&](V& v) { v.resize(v.size() + 3, eight); }, this->strong, grown_by(3, 8));
  this->run(
      [](V& v) {
        if (!v.empty()) v.resize(v.size() + 2, v.front());
      },
      this->strong,
      [](const V& v, const snapshot& before) {
        EXPECT_EQ(v.size(), before.values.empty() ? 0 : before.values.size() + 2);
      });
}

// ---- basic guarantee
// -----------------------------------------------------------------------------

TYPED_TEST(SmallVectorExceptions, CopyConstructionLeaksNothing) {
  using V = typename TestFixture::vector_type;
  const auto f = this->run(
      [](V& v) {
        const V copy(v);
        EXPECT_EQ(values(copy), values(v));
      },
      this->strong,  // the source is untouched
      [](const V& v, const snapshot& before) { EXPECT_EQ(values(v), before.values); });
  if (TestFixture::element_faults) {
    EXPECT_GT(f.first, 0);
  }
}

TYPED_TEST(SmallVectorExceptions, MoveConstructionLeaksNothing) {
  using V = typename TestFixture::vector_type;
  this->run(
      [](V& v) {
        const V moved(std::move(v));
        EXPECT_TRUE(v.empty());
      },
      this->basic, [](const V& v, const snapshot&) { EXPECT_TRUE(v.empty()); });
}

TYPED_TEST(SmallVectorExceptions, CopyAssignmentIsBasic) {
  using V = typename TestFixture::vector_type;
  for (std::size_t source_size : sizes_around(TestFixture::N)) {
    V source;
    for (std::size_t i = 0; i < source_size; ++i) source.emplace_back(200 + static_cast<int>(i));
    const std::vector<int> expected = values(source);
    this->run([&](V& v) { v = source; }, this->basic,
              [&](const V& v, const snapshot&) { EXPECT_EQ(values(v), expected); });
    EXPECT_EQ(values(source), expected);
  }
}

TYPED_TEST(SmallVectorExceptions, AssignIsBasic) {
  using V = typename TestFixture::vector_type;
  using T = typename TestFixture::element_type;
  const T seven(7);
  for (std::size_t count : sizes_around(TestFixture::N)) {
    this->run(
        [&](V& v) { v.assign(count, seven); }, this->basic,
        [&](const V& v, const snapshot&) { EXPECT_EQ(values(v), std::vector<int>(count, 7)); });
    std::vector<T> source;
    for (std::size_t i = 0; i < count; ++i) source.emplace_back(200 + static_cast<int>(i));
    this->run([&](V& v) { v.assign(source.begin(), source.end()); }, this->basic,
              [&](const V& v, const snapshot&) { EXPECT_EQ(values(v), values(source)); });
  }
  this->run(
      [](V& v) {
        if (!v.empty()) v.assign(v.size() + 2, v.back());
      },
      this->basic, [](const V&, const snapshot&) {});
}

TYPED_TEST(SmallVectorExceptions, InsertInTheMiddleIsBasic) {
  using V = typename TestFixture::vector_type;
  using T = typename TestFixture::element_type;
  const T seven(7);
  const auto mid = [](V& v) { return v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2); };
  const auto inserted_at_middle = [](std::vector<int> added) {
    return [added](const V& v, const snapshot& before) {
      std::vector<int> expected = before.values;
      expected.insert(expected.begin() + static_cast<std::ptrdiff_t>(expected.size() / 2),
                      added.begin(), added.end());
      EXPECT_EQ(values(v), expected);
    };
  };
  this->run([&](V& v) { v.insert(mid(v), seven); }, this->basic, inserted_at_middle({7}));
  this->run([&](V& v) { v.insert(mid(v), T(7)); }, this->basic, inserted_at_middle({7}));
  this->run([&](V& v) { v.emplace(mid(v), 7); }, this->basic, inserted_at_middle({7}));
  this->run([&](V& v) { v.insert(mid(v), 3, seven); }, this->basic, inserted_at_middle({7, 7, 7}));
  const std::vector<T> range = {T(7), T(8), T(7), T(8)};
  this->run([&](V& v) { v.insert(mid(v), range.begin(), range.end()); }, this->basic,
            inserted_at_middle({7, 8, 7, 8}));
  // Aliasing: the value and the range come from the vector itself.
  this->run(
      [&](V& v) {
        if (!v.empty()) v.insert(mid(v), v.back());
      },
      this->basic, [](const V&, const snapshot&) {});
  this->run(
      [&](V& v) {
        if (!v.empty()) v.insert(mid(v), 2, v.back());
      },
      this->basic, [](const V&, const snapshot&) {});
  this->run(
      [&](V& v) { v.insert(mid(v), v.begin(), v.end()); }, this->basic,
      [](const V& v, const snapshot& before) { EXPECT_EQ(v.size(), 2 * before.values.size()); });
}

TYPED_TEST(SmallVectorExceptions, EraseIsBasic) {
  using V = typename TestFixture::vector_type;
  this->run(
      [](V& v) {
        if (!v.empty()) v.erase(v.begin());
      },
      this->basic,
      [](const V& v, const snapshot& before) {
        std::vector<int> expected = before.values;
        if (!expected.empty()) expected.erase(expected.begin());
        EXPECT_EQ(values(v), expected);
      });
  this->run([](V& v) { v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2)); },
            this->basic,
            [](const V& v, const snapshot& before) {
              EXPECT_EQ(v.size(), before.values.size() - before.values.size() / 2);
            });
}

// ---- max_size
// --------------------------------------------------------------------------------------

template <class V>
void check_max_size(V& v) {
  using T = typename V::value_type;
  const T seven(7);
  const std::size_t ms = v.max_size();
  const std::size_t huge = std::numeric_limits<std::size_t>::max();
  const snapshot before = take(v);
  EXPECT_THROW(v.reserve(ms + 1), std::length_error);
  EXPECT_TRUE(unchanged(v, before));
  EXPECT_THROW(v.reserve(huge), std::length_error);
  EXPECT_TRUE(unchanged(v, before));
  EXPECT_THROW(v.resize(ms + 1), std::length_error);
  EXPECT_TRUE(unchanged(v, before));
  EXPECT_THROW(v.resize(huge), std::length_error);
  EXPECT_TRUE(unchanged(v, before));
  EXPECT_THROW(v.resize(ms + 1, seven), std::length_error);
  EXPECT_TRUE(unchanged(v, before));
  EXPECT_THROW(v.assign(ms + 1, seven), std::length_error);
  EXPECT_TRUE(unchanged(v, before));
  if (!v.empty()) {
    EXPECT_THROW(v.insert(v.begin(), ms, seven), std::length_error);  // size() + ms > ms
    EXPECT_TRUE(unchanged(v, before));
  }
}

template <class V>
void check_max_size_all() {
  for (std::size_t size : {std::size_t{0}, std::size_t{3}, std::size_t{20}}) {
    SCOPED_TRACE(::testing::Message() << "size " << size);
    V v = make_vector<V>(size, layout::grown);
    check_max_size(v);
  }
  const std::size_t ms = V().max_size();
  EXPECT_THROW(V w(ms + 1), std::length_error);
  EXPECT_THROW(V w(ms + 1, typename V::value_type(7)), std::length_error);
}

class SmallVectorMaxSize : public ::testing::Test {
 protected:
  void SetUp() override {
    disarm();
    lowalloc_test::reset_counts();
    allocations() = allocation_control{};
  }
  void TearDown() override {
    EXPECT_EQ(counts().live(), 0);
    EXPECT_EQ(allocations().outstanding, 0);
  }
};

TEST_F(SmallVectorMaxSize, IsTheLayoutLimit) {
  // 2^39 - 1 (the size field), unless the allocator or the address space says less.
  EXPECT_EQ((lowalloc::small_vector<int, 8>().max_size()), (std::size_t{1} << 39) - 1);
  EXPECT_EQ((lowalloc::small_vector<char, 8>().max_size()), (std::size_t{1} << 39) - 1);
  EXPECT_LE((lowalloc::small_vector<int, 8>().max_size()),
            std::allocator_traits<std::allocator<int>>::max_size(std::allocator<int>()));
}

TEST_F(SmallVectorMaxSize, PastMaxSizeThrowsLengthErrorAndChangesNothing) {
  check_max_size_all<lowalloc::small_vector<int, 8>>();
  check_max_size_all<lowalloc::small_vector<int, 0>>();
  check_max_size_all<lowalloc::small_vector<counted, 8, failing_allocator<counted>>>();
  check_max_size_all<lowalloc::small_vector<throwing, 1, failing_allocator<throwing>>>();
}

// ---- move assignment through the base
// --------------------------------------------------------------

// Moving an inline vector with a larger N into a smaller one through small_vector_base must
// allocate (the elements do not fit the target's inline storage), yet the base's move assignment
// is declared noexcept whenever the allocator is always equal: an allocation failure there calls
// std::terminate instead of throwing std::bad_alloc. The assignment runs in a child process so
// that the termination fails this test only.
// Exits with 0 when the assignment reports the failure with std::bad_alloc.
[[noreturn]] void move_assign_through_base_with_failing_allocation() {
  using alloc = failing_allocator<counted>;
  lowalloc::small_vector<counted, 2, alloc> a;
  lowalloc::small_vector<counted, 8, alloc> b;
  for (int i = 0; i < 5; ++i) b.emplace_back(i);
  lowalloc::small_vector_base<counted, alloc>& ba = a;
  lowalloc::small_vector_base<counted, alloc>& bb = b;
  arm(fault::allocation, 0);
  try {
    ba = std::move(bb);
  } catch (const std::bad_alloc&) {
    std::exit(0);
  }
  std::exit(1);  // no allocation failed: the injection did not reach the assignment
}

TEST(SmallVectorMoveAssignment, ThroughTheBaseReportsAllocationFailure) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(move_assign_through_base_with_failing_allocation(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
