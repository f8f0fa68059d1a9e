// The include paths of lowalloc/detail/ that the public customization points had before they got
// public headers still compile on their own, and name the same entities: code written against
// them keeps working.
#include <lowalloc/detail/relocate.hpp>
#include <lowalloc/detail/string_storage.hpp>

#include <type_traits>

namespace {

// Trivially relocatable through the old path; small_vector below must see it.
struct old_path_handle {
  explicit old_path_handle(int v) : p(new int(v)) {}
  old_path_handle(old_path_handle&& o) noexcept : p(o.p) {
    o.p = nullptr;
    ++moves;
  }
  old_path_handle(const old_path_handle&) = delete;
  old_path_handle& operator=(const old_path_handle&) = delete;
  old_path_handle& operator=(old_path_handle&&) = delete;
  ~old_path_handle() { delete p; }

  int* p;
  static inline int moves = 0;
};

}  // namespace

template <>
struct lowalloc::is_trivially_relocatable<old_path_handle> : std::true_type {};

static_assert(lowalloc::is_trivially_relocatable_v<old_path_handle>);
static_assert(sizeof(lowalloc::fixed_storage<char, 15>) == 16);
static_assert(lowalloc::small_storage<char, 32>::inline_capacity == 31);

#include <lowalloc/relocate.hpp>
#include <lowalloc/small_vector.hpp>
#include <lowalloc/string.hpp>
#include <lowalloc/string_storage.hpp>

#include <gtest/gtest.h>

namespace {

TEST(OldIncludePaths, SpecialisationThroughTheOldPathIsHonoured) {
  old_path_handle::moves = 0;
  lowalloc::small_vector<old_path_handle, 1> v;
  for (int i = 0; i < 10; ++i) v.emplace_back(i);
  EXPECT_EQ(old_path_handle::moves, 0);
  EXPECT_EQ(*v[9].p, 9);
}

TEST(OldIncludePaths, StoragesAreTheSameClasses) {
  static_assert(std::is_same_v<lowalloc::fixed_string<8>,
                               lowalloc::basic_string<char, lowalloc::fixed_storage<char, 8>>>);
  lowalloc::basic_string<char, lowalloc::fixed_storage<char, 8>> s = "old";
  EXPECT_EQ(s + "path", "oldpath");
}

}  // namespace
