// small_vector and inplace_vector order their elements with one synth-three-way
// (lowalloc/detail/compare.hpp): as std::vector does, whatever the element offers.
#include <lowalloc/inplace_vector.hpp>
#include <lowalloc/small_vector.hpp>

#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#if LOWALLOC_HAS_THREE_WAY_COMPARISON
#include <compare>
#endif

namespace {

struct only_less {
  int v;
  friend bool operator<(const only_less& a, const only_less& b) { return a.v < b.v; }
};

template <class Vector>
Vector make(std::initializer_list<int> il) {
  Vector r;
  for (int x : il) r.push_back(typename Vector::value_type{x});
  return r;
}

template <class Vector>
class ContainerCompare : public ::testing::Test {};

using vectors =
    ::testing::Types<lowalloc::small_vector<only_less, 2>, lowalloc::inplace_vector<only_less, 4>>;
TYPED_TEST_SUITE(ContainerCompare, vectors);

// Elements with only a < still order the vectors, lexicographically.
TYPED_TEST(ContainerCompare, ElementsWithOnlyLessOrderTheVector) {
  const auto a = make<TypeParam>({1, 2});
  const auto b = make<TypeParam>({1, 3});
  const auto c = make<TypeParam>({1, 2, 0});
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(a < c);  // a prefix comes first
  EXPECT_TRUE(b > c);
  EXPECT_TRUE(a <= a);
  EXPECT_FALSE(a > a);
  EXPECT_TRUE(c >= a);
#if LOWALLOC_HAS_THREE_WAY_COMPARISON
  static_assert(std::is_same_v<decltype(a <=> b), std::weak_ordering>);
  EXPECT_EQ(a <=> b, std::weak_ordering::less);
  EXPECT_EQ(a <=> a, std::weak_ordering::equivalent);
#endif
}

#if LOWALLOC_HAS_THREE_WAY_COMPARISON
struct no_order {
  int v;
};
struct ordered {
  int v;
  auto operator<=>(const ordered&) const = default;
};

// Elements with <=> lend their category; elements without < make the vector unordered, not a
// compile error.
TEST(ContainerCompare, ThreeWayCategoryFollowsTheElements) {
  static_assert(
      std::three_way_comparable<lowalloc::small_vector<ordered, 2>, std::strong_ordering>);
  static_assert(
      std::three_way_comparable<lowalloc::inplace_vector<ordered, 2>, std::strong_ordering>);
  static_assert(
      std::three_way_comparable<lowalloc::small_vector<double, 2>, std::partial_ordering>);
  static_assert(!std::three_way_comparable<lowalloc::small_vector<no_order, 2>>);
  static_assert(!std::three_way_comparable<lowalloc::inplace_vector<no_order, 2>>);
  const lowalloc::small_vector<std::string, 1> s = {"a", "b"};
  const lowalloc::inplace_vector<std::string, 2> t = {"a", "c"};
  EXPECT_EQ(s <=> s, std::strong_ordering::equal);
  EXPECT_EQ(t <=> t, std::strong_ordering::equal);
}
#endif

}  // namespace
