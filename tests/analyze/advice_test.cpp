// The arithmetic of `lowalloc advise`: the object sizes it quotes against the real types', the
// allocations a small_vector makes against a counted run of one, and the element type it reads
// off a container's name.
#include "analyze/advice.hpp"

#include <lowalloc/inplace_vector.hpp>
#include <lowalloc/small_vector.hpp>
#include <lowalloc/string.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

using lowalloc::analyze::detail::first_template_argument;
using lowalloc::analyze::detail::fixed_string_sizeof;
using lowalloc::analyze::detail::inplace_vector_sizeof;
using lowalloc::analyze::detail::looks_up;
using lowalloc::analyze::detail::small_string_sizeof;
using lowalloc::analyze::detail::small_vector_allocations;
using lowalloc::analyze::detail::small_vector_sizeof;
using lowalloc::analyze::detail::template_arguments;
using lowalloc::analyze::detail::with_pool_allocator;

template <class T, std::size_t N>
void expect_small_vector_size() {
  EXPECT_EQ(small_vector_sizeof(sizeof(T), alignof(T), N), sizeof(lowalloc::small_vector<T, N>))
      << "sizeof(T) " << sizeof(T) << ", N " << N;
}

struct twelve {
  int a, b, c;
};

TEST(Advice, ObjectSizesAreTheTypesOwn) {
  expect_small_vector_size<int, 1>();
  expect_small_vector_size<int, 4>();
  expect_small_vector_size<int, 8>();
  expect_small_vector_size<int, 16>();
  expect_small_vector_size<char, 16>();
  expect_small_vector_size<char, 100>();
  expect_small_vector_size<double, 3>();
  expect_small_vector_size<double, 32>();
  expect_small_vector_size<twelve, 5>();
  expect_small_vector_size<std::string, 4>();
  expect_small_vector_size<std::uint16_t, 7>();
  EXPECT_EQ(inplace_vector_sizeof(4, 4, 8), (sizeof(lowalloc::inplace_vector<int, 8>)));
  EXPECT_EQ(inplace_vector_sizeof(4, 4, 16), (sizeof(lowalloc::inplace_vector<int, 16>)));
  EXPECT_EQ(inplace_vector_sizeof(1, 1, 255), (sizeof(lowalloc::inplace_vector<char, 255>)));
  EXPECT_EQ(inplace_vector_sizeof(1, 1, 256), (sizeof(lowalloc::inplace_vector<char, 256>)));
  EXPECT_EQ(inplace_vector_sizeof(8, 8, 3), (sizeof(lowalloc::inplace_vector<double, 3>)));
  EXPECT_EQ(inplace_vector_sizeof(12, 4, 5), (sizeof(lowalloc::inplace_vector<twelve, 5>)));
  EXPECT_EQ(inplace_vector_sizeof(32, 8, 2), (sizeof(lowalloc::inplace_vector<std::string, 2>)));
  EXPECT_EQ(small_string_sizeof(16), sizeof(lowalloc::small_string<16>));
  EXPECT_EQ(small_string_sizeof(24), sizeof(lowalloc::small_string<24>));
  EXPECT_EQ(small_string_sizeof(32), sizeof(lowalloc::small_string<32>));
  EXPECT_EQ(small_string_sizeof(40), sizeof(lowalloc::small_string<40>));
  EXPECT_EQ(small_string_sizeof(64), sizeof(lowalloc::small_string<64>));
  EXPECT_EQ(small_string_sizeof(128), sizeof(lowalloc::small_string<128>));
  EXPECT_EQ(fixed_string_sizeof(15), sizeof(lowalloc::fixed_string<15>));
  EXPECT_EQ(fixed_string_sizeof(40), sizeof(lowalloc::fixed_string<40>));
  EXPECT_EQ(fixed_string_sizeof(63), sizeof(lowalloc::fixed_string<63>));
}

// Counts the allocations of a small_vector through an allocator (the realloc path is for
// std::allocator only, and makes one allocation per growth just the same).
std::uint64_t allocations_made = 0;
template <class T>
struct counting_allocator {
  using value_type = T;
  counting_allocator() = default;
  template <class U>
  counting_allocator(const counting_allocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    ++allocations_made;
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>().deallocate(p, n); }
  friend bool operator==(const counting_allocator&, const counting_allocator&) { return true; }
  friend bool operator!=(const counting_allocator&, const counting_allocator&) { return false; }
};

template <std::size_t N>
std::uint64_t allocations_to_push(std::uint64_t n) {
  allocations_made = 0;
  lowalloc::small_vector<int, N, counting_allocator<int>> v;
  for (std::uint64_t i = 0; i < n; ++i) v.push_back(static_cast<int>(i));
  return allocations_made;
}

TEST(Advice, SmallVectorAllocationsAreThoseOfARealOne) {
  // A std::vector grown by push_back to n elements ends at the capacity 2^ceil(log2 n); the
  // prediction from that capacity matches a small_vector pushed to n, for every n.
  for (std::uint64_t n = 1; n <= 300; ++n) {
    std::uint64_t capacity = 1;
    while (capacity < n) capacity *= 2;
    EXPECT_EQ(small_vector_allocations(capacity, 1), allocations_to_push<1>(n)) << n;
    EXPECT_EQ(small_vector_allocations(capacity, 2), allocations_to_push<2>(n)) << n;
    EXPECT_EQ(small_vector_allocations(capacity, 4), allocations_to_push<4>(n)) << n;
    EXPECT_EQ(small_vector_allocations(capacity, 8), allocations_to_push<8>(n)) << n;
    EXPECT_EQ(small_vector_allocations(capacity, 16), allocations_to_push<16>(n)) << n;
    EXPECT_EQ(small_vector_allocations(capacity, 64), allocations_to_push<64>(n)) << n;
  }
}

TEST(Advice, TheElementTypeIsTheFirstTemplateArgument) {
  EXPECT_EQ(first_template_argument("std::vector<int>"), "int");
  EXPECT_EQ(first_template_argument("std::vector<std::pair<int, long>>"), "std::pair<int, long>");
  EXPECT_EQ(first_template_argument("std::map<std::string, std::vector<int> >"), "std::string");
  EXPECT_EQ(first_template_argument("std::vector<void (*)(int, int)>"), "void (*)(int, int)");
  EXPECT_EQ(first_template_argument("std::string"), "");
  EXPECT_EQ(first_template_argument(""), "");
}

TEST(Advice, TemplateArgumentsAreSplitAtTheTopLevel) {
  EXPECT_EQ(template_arguments("std::map<int, std::pair<int, long>>"),
            (std::vector<std::string>{"int", "std::pair<int, long>"}));
  EXPECT_EQ(template_arguments("std::list<void (*)(int, int)>"),
            (std::vector<std::string>{"void (*)(int, int)"}));
  EXPECT_TRUE(template_arguments("int").empty());
}

// The container the pool advice writes out must be the type a user would write: the same
// default arguments, and the allocator of the node's value type.
TEST(Advice, PoolAllocatorTypesAreTheStandardDefaultsWithThePoolsAllocator) {
  EXPECT_EQ(with_pool_allocator("std::map<long, long>"),
            "std::map<long, long, std::less<long>, "
            "lowalloc::pool_allocator<std::pair<const long, long>>>");
  EXPECT_EQ(with_pool_allocator("std::set<std::string>"),
            "std::set<std::string, std::less<std::string>, "
            "lowalloc::pool_allocator<std::string>>");
  EXPECT_EQ(with_pool_allocator("std::unordered_map<int, double>"),
            "std::unordered_map<int, double, std::hash<int>, std::equal_to<int>, "
            "lowalloc::pool_allocator<std::pair<const int, double>>>");
  EXPECT_EQ(with_pool_allocator("std::list<int>"), "std::list<int, lowalloc::pool_allocator<int>>");
  EXPECT_EQ(with_pool_allocator("std::vector<int>"), "");
  EXPECT_EQ(with_pool_allocator("std::map<int, int, my_less>"), "");  // a comparator of its own
}

TEST(Advice, LookupsAreCallsOfTheLookupMembersOrASubscriptByName) {
  EXPECT_TRUE(looks_up("  return table.find(key) != table.end();"));
  EXPECT_TRUE(looks_up("if (m.count(name)) ++n;"));
  EXPECT_TRUE(looks_up("total += prices[\"apple\"];"));
  EXPECT_TRUE(looks_up("auto& v = index->at(k);"));
  EXPECT_FALSE(looks_up("v[0] = std::string(text);"));
  EXPECT_FALSE(looks_up("names.push_back(text);"));
}

}  // namespace
