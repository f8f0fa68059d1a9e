// The string family against std::string: the same random operations on both, compared after
// every step (tests/support/string_ops.hpp), for small_string<24>, <32>, <64> (inline capacities
// 23, 31, 63: the sequences cross them often) and fixed_string<64> (std::length_error and no
// effect where std::string would grow past 64 characters).
#include <lowalloc/alloc_count.hpp>
#include <lowalloc/string.hpp>

#include "support/string_ops.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace {

using string_types = ::testing::Types<lowalloc::small_string<24>, lowalloc::small_string<32>,
                                      lowalloc::small_string<64>, lowalloc::fixed_string<64>>;

struct string_names {
  template <class S>
  static std::string GetName(int) {
    const std::size_t inline_capacity = S().capacity();
    if (S().max_size() == inline_capacity) {
      return "fixed_string_" + std::to_string(inline_capacity);
    }
    return "small_string_" + std::to_string(inline_capacity + 1);
  }
};

// Each type runs kSequences independent sequences of kSteps operations, each from empty strings.
constexpr std::size_t kSequences = 8;
constexpr std::size_t kSteps = 16000;

template <class S>
class StringDifferential : public ::testing::Test {};
TYPED_TEST_SUITE(StringDifferential, string_types, string_names);

TYPED_TEST(StringDifferential, RandomOperationsMatchStdString) {
  const lowalloc::alloc_counter heap;
  for (std::size_t seq = 0; seq < kSequences; ++seq) {
    const std::uint64_t seed = 0x57a1f00du + seq * 7919 + sizeof(TypeParam);
    lowalloc_test::rng_source src(seed);
    lowalloc_test::string_ops<TypeParam> ops;
    for (std::size_t i = 0; i < kSteps; ++i) {
      if (!ops.step(src)) {
        FAIL() << "seed " << seed << ": " << ops.failure();
      }
    }
  }
  // Everything the strings allocated was given back.
  EXPECT_EQ(heap.allocations(), heap.deallocations());
}

}  // namespace
