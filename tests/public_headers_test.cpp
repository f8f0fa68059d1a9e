// The public customization points, reached through their public headers: a type marked
// trivially relocatable with <lowalloc/relocate.hpp> alone, and storages for basic_string built
// on <lowalloc/string_storage.hpp>. public_headers_old_paths_test.cpp checks that the old
// lowalloc/detail/ paths still compile on their own.
//
// The two public headers come first and the type is marked before any container is included:
// each must stand on its own.
#include <lowalloc/relocate.hpp>
#include <lowalloc/string_storage.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace {

struct lifetime_counts {
  int copies = 0;
  int moves = 0;
  int destructions = 0;
};
lifetime_counts g_counts;

// Owns a heap int, as a unique_ptr does: not trivially copyable, but moving it to a new address
// and forgetting the old one is a plain copy of its bytes.
template <int Tag>
class handle {
 public:
  explicit handle(int v) : p_(new int(v)) {}
  handle(const handle& o) : p_(new int(*o.p_)) { ++g_counts.copies; }
  handle(handle&& o) noexcept : p_(std::exchange(o.p_, nullptr)) { ++g_counts.moves; }
  handle& operator=(const handle& o) {
    *p_ = *o.p_;
    ++g_counts.copies;
    return *this;
  }
  handle& operator=(handle&& o) noexcept {
    std::swap(p_, o.p_);
    ++g_counts.moves;
    return *this;
  }
  ~handle() {
    ++g_counts.destructions;
    delete p_;
  }
  int value() const { return *p_; }

 private:
  int* p_;
};

using marked_handle = handle<0>;
using unmarked_handle = handle<1>;

}  // namespace

template <>
struct lowalloc::is_trivially_relocatable<marked_handle> : std::true_type {};

static_assert(lowalloc::is_trivially_relocatable_v<marked_handle>);
static_assert(!lowalloc::is_trivially_relocatable_v<unmarked_handle>);
static_assert(lowalloc::is_trivially_relocatable_v<int>, "trivially copyable types are");

#include <lowalloc/arena.hpp>
#include <lowalloc/small_vector.hpp>
#include <lowalloc/string.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <memory_resource>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

// ---- is_trivially_relocatable ------------------------------------------------------------------

template <class T>
void grow_and_shrink(lowalloc::small_vector<T, 2>& v) {
  for (int i = 0; i < 2; ++i) v.emplace_back(i);  // inline
  v.emplace_back(2);                              // inline -> heap
  v.reserve(100);                                 // heap -> heap
  v.pop_back();
  v.shrink_to_fit();  // heap -> inline
}

TEST(PublicRelocate, AUserSpecialisationMakesSmallVectorRelocateByMemcpy) {
  g_counts = {};
  {
    lowalloc::small_vector<marked_handle, 2> v;
    grow_and_shrink(v);
    EXPECT_EQ(g_counts.moves, 0);
    EXPECT_EQ(g_counts.copies, 0);
    EXPECT_EQ(g_counts.destructions, 1);  // pop_back's; relocation destroys nothing
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].value(), 0);
    EXPECT_EQ(v[1].value(), 1);
  }
  EXPECT_EQ(g_counts.destructions, 3);
}

TEST(PublicRelocate, WithoutTheSpecialisationElementsAreMoved) {
  g_counts = {};
  {
    lowalloc::small_vector<unmarked_handle, 2> v;
    grow_and_shrink(v);
    EXPECT_GT(g_counts.moves, 0);
    EXPECT_EQ(g_counts.copies, 0);
    EXPECT_EQ(g_counts.destructions, 1 + g_counts.moves);  // each move leaves a source behind
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[1].value(), 1);
  }
}

// ---- storages ----------------------------------------------------------------------------------

// The shipped storages stand alone: the header needs no basic_string to use them.
TEST(PublicStringStorage, ShippedStoragesWorkOnTheirOwn) {
  // 255 or more free characters do not fit in the last slot: the size goes to a size word.
  lowalloc::fixed_storage<char, 300> f;
  EXPECT_EQ(f.size(), 0u);
  EXPECT_EQ(f.data()[0], '\0');
  f.set_size(290);  // 10 free: in the slot
  EXPECT_EQ(f.size(), 290u);
  EXPECT_EQ(f.data()[290], '\0');
  f.set_size(1);  // 299 free: in the size word
  EXPECT_EQ(f.size(), 1u);
  EXPECT_EQ(f.data()[1], '\0');

  lowalloc::small_storage<char, 32> s;
  EXPECT_EQ(s.capacity(), 31u);
  s.reserve(100);
  EXPECT_FALSE(s.is_inline());
  s.set_size(80);
  EXPECT_EQ(s.size(), 80u);
  s.set_size(3);
  s.shrink_to_fit();
  EXPECT_TRUE(s.is_inline());
  EXPECT_EQ(s.size(), 3u);
}

TEST(PublicStringStorage, ShippedStringsAreBasicStringsOverThem) {
  static_assert(std::is_same_v<lowalloc::small_string<32>,
                               lowalloc::basic_string<char, lowalloc::small_storage<char, 32>>>);
  static_assert(std::is_same_v<lowalloc::fixed_string<15>,
                               lowalloc::basic_string<char, lowalloc::fixed_storage<char, 15>>>);
}

// A storage written by a user: fixed_storage underneath, with the calls basic_string makes
// counted. Its counters are static, so it is exactly as big as what it wraps.
struct storage_calls {
  int set_size = 0;
  int reserve = 0;
};
storage_calls g_calls;

template <std::size_t N>
class counting_storage {
 public:
  using value_type = char;
  using size_type = std::size_t;

  void swap(counting_storage& o) noexcept { s_.swap(o.s_); }
  char* data() noexcept { return s_.data(); }
  const char* data() const noexcept { return s_.data(); }
  size_type size() const noexcept { return s_.size(); }
  size_type capacity() const noexcept { return s_.capacity(); }
  size_type max_size() const noexcept { return s_.max_size(); }
  void set_size(size_type n) noexcept {
    ++g_calls.set_size;
    s_.set_size(n);
  }
  void reserve(size_type n) {
    ++g_calls.reserve;
    s_.reserve(n);
  }
  void shrink_to_fit() { s_.shrink_to_fit(); }

 private:
  lowalloc::fixed_storage<char, N> s_;
};

using counting_string = lowalloc::basic_string<char, counting_storage<15>>;
static_assert(sizeof(counting_string) == sizeof(lowalloc::fixed_string<15>));

TEST(PublicStringStorage, AUserStorageCarriesTheWholeInterface) {
  g_calls = {};
  counting_string s = "hello";
  EXPECT_GT(g_calls.set_size, 0);
  s += ", world";
  s.insert(0, 1, '>');
  EXPECT_EQ(s, ">hello, world");
  EXPECT_EQ(s.size(), 13u);
  EXPECT_EQ(s.find("world"), 8u);
  EXPECT_EQ(s.substr(1, 5), "hello");
  EXPECT_LT(s, std::string(">world"));
  EXPECT_EQ(std::hash<counting_string>()(s), std::hash<std::string_view>()(">hello, world"));

  counting_string t = std::move(s);
  EXPECT_EQ(t, ">hello, world");
  EXPECT_TRUE(s.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty, as documented
  s.swap(t);
  EXPECT_EQ(s, ">hello, world");

  EXPECT_THROW(s.append("123"), std::length_error);  // past the 15 characters of the storage
  EXPECT_EQ(s, ">hello, world");                     // strong guarantee
  s.resize(15, '!');
  EXPECT_EQ(s, ">hello, world!!");
  EXPECT_EQ(s.c_str()[15], '\0');
}

TEST(PublicStringStorage, ShippedStorageWithAnAllocatorOfTheUsersChoice) {
  using arena_string = lowalloc::basic_string<
      char, lowalloc::small_storage<char, 24, std::pmr::polymorphic_allocator<char>>>;
  lowalloc::arena<1024> a;
  arena_string s(&a);
  s.assign(100, 'y');  // past the 23 inline characters: the block comes from the arena
  EXPECT_EQ(s.get_allocator().resource(), &a);
  EXPECT_GE(a.stats().bytes_allocated, 101u);
  EXPECT_EQ(s, std::string(100, 'y'));
}

}  // namespace
