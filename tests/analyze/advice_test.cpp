// The arithmetic of `lowalloc advise`: the object sizes it quotes against the real types', the
// allocations a small_vector makes against a counted run of one, and the element type it reads
// off a container's name.
#include "analyze/advice.hpp"
#include "analyze/bursts.hpp"

#include <lowalloc/arena.hpp>
#include <lowalloc/inplace_vector.hpp>
#include <lowalloc/small_vector.hpp>
#include <lowalloc/string.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <memory_resource>
#include <string>
#include <string_view>
#include <vector>

namespace {

using lowalloc::analyze::detail::arena_chunks;
using lowalloc::analyze::detail::first_template_argument;
using lowalloc::analyze::detail::fixed_string_sizeof;
using lowalloc::analyze::detail::inplace_vector_sizeof;
using lowalloc::analyze::detail::known_type_size;
using lowalloc::analyze::detail::looks_up;
using lowalloc::analyze::detail::small_string_sizeof;
using lowalloc::analyze::detail::small_vector_allocations;
using lowalloc::analyze::detail::small_vector_sizeof;
using lowalloc::analyze::detail::template_arguments;
using lowalloc::analyze::detail::with_allocator;

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

// The element sizes the vector advice takes from a type's name, against this library's types.
TEST(Advice, KnownTypeSizesAreTheTypesOwn) {
  EXPECT_EQ(known_type_size("int", false), sizeof(int));
  EXPECT_EQ(known_type_size("unsigned long", false), sizeof(unsigned long));
  EXPECT_EQ(known_type_size("double", false), sizeof(double));
  EXPECT_EQ(known_type_size("char", false), sizeof(char));
  EXPECT_EQ(known_type_size("Node*", false), sizeof(void*));
  EXPECT_EQ(known_type_size("char const*", false), sizeof(char const*));
  EXPECT_EQ(known_type_size("std::string", false), sizeof(std::string));  // libstdc++ here
  EXPECT_EQ(known_type_size("std::string", true), 24u);                   // libc++'s
  EXPECT_EQ(known_type_size("std::string_view", false), sizeof(std::string_view));
  EXPECT_EQ(known_type_size("std::vector<int>", false), sizeof(std::vector<int>));
  EXPECT_EQ(known_type_size("std::unique_ptr<Node>", false), sizeof(std::unique_ptr<int>));
  EXPECT_EQ(known_type_size("std::shared_ptr<Node>", false), sizeof(std::shared_ptr<int>));
  EXPECT_EQ(known_type_size("Token", false), 0u);
  EXPECT_EQ(known_type_size("std::pair<int, int>", false), 0u);
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
  const std::string pool = "lowalloc::pool_allocator";
  EXPECT_EQ(with_allocator("std::map<long, long>", pool),
            "std::map<long, long, std::less<long>, "
            "lowalloc::pool_allocator<std::pair<const long, long>>>");
  EXPECT_EQ(with_allocator("std::set<std::string>", pool),
            "std::set<std::string, std::less<std::string>, "
            "lowalloc::pool_allocator<std::string>>");
  EXPECT_EQ(with_allocator("std::unordered_map<int, double>", pool),
            "std::unordered_map<int, double, std::hash<int>, std::equal_to<int>, "
            "lowalloc::pool_allocator<std::pair<const int, double>>>");
  EXPECT_EQ(with_allocator("std::list<int>", pool),
            "std::list<int, lowalloc::pool_allocator<int>>");
  EXPECT_EQ(with_allocator("std::vector<int>", "lowalloc::arena_allocator"),
            "std::vector<int, lowalloc::arena_allocator<int>>");
  EXPECT_EQ(with_allocator("std::string", "lowalloc::arena_allocator"),
            "std::basic_string<char, std::char_traits<char>, lowalloc::arena_allocator<char>>");
  EXPECT_EQ(with_allocator("std::map<int, int, my_less>", pool), "");  // a comparator of its own
  EXPECT_EQ(with_allocator("std::shared_ptr<int>", pool), "");
}

// An upstream that counts what an arena asks of it.
class counting_resource : public std::pmr::memory_resource {
 public:
  std::size_t allocations = 0;

 private:
  void* do_allocate(std::size_t bytes, std::size_t align) override {
    ++allocations;
    return std::pmr::new_delete_resource()->allocate(bytes, align);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
    std::pmr::new_delete_resource()->deallocate(p, bytes, align);
  }
  bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override {
    return this == &o;
  }
};

template <std::size_t N>
std::size_t arena_upstream_allocations(std::size_t blocks, std::size_t size) {
  counting_resource upstream;
  lowalloc::arena<N> a(&upstream);
  for (std::size_t i = 0; i < blocks; ++i) (void)a.allocate(size);
  return upstream.allocations;
}

// The arena's chunk arithmetic that the `arena` prediction uses, against the arena's own.
TEST(Advice, ArenaChunksAreTheArenasOwn) {
  for (const std::size_t blocks : {0u, 1u, 31u, 32u, 33u, 64u, 100u, 1000u, 20000u}) {
    for (const std::size_t size : {16u, 32u, 48u, 112u, 1008u, 3000u}) {
      // Under AddressSanitizer the arena leaves a poisoned redzone after each block: a block
      // costs that much more (the prediction is for a build without it).
      const std::size_t s = (size + 15) / 16 * 16 + lowalloc::detail::arena_redzone;
      EXPECT_EQ(arena_chunks(1024, blocks, s), arena_upstream_allocations<1024>(blocks, size))
          << blocks << " x " << size;
      EXPECT_EQ(arena_chunks(4096, blocks, s), arena_upstream_allocations<4096>(blocks, size))
          << blocks << " x " << size;
      EXPECT_EQ(arena_chunks(0, blocks, s), arena_upstream_allocations<0>(blocks, size))
          << blocks << " x " << size;
    }
  }
}

TEST(Advice, LookupsAreCallsOfTheLookupMembersOrASubscriptByName) {
  EXPECT_TRUE(looks_up("  return table.find(key) != table.end();"));
  EXPECT_TRUE(looks_up("if (m.count(name)) ++n;"));
  EXPECT_TRUE(looks_up("total += prices[\"apple\"];"));
  EXPECT_TRUE(looks_up("auto& v = index->at(k);"));
  EXPECT_FALSE(looks_up("v[0] = std::string(text);"));
  EXPECT_FALSE(looks_up("names.push_back(text);"));
}

// Bursts of frees, fed as the merge feeds them.
struct burst_feed {
  lowalloc::analyze::burst_tracker t;
  void alloc(std::uint32_t thread, std::uint32_t stack, std::uint64_t size) {
    lowalloc::analyze::alloc_event e;
    e.thread = thread;
    e.stack = stack;
    e.size = size;
    t.on_alloc(e);
  }
  void free(std::uint32_t thread, std::uint32_t stack, std::uint64_t size, bool matched = true) {
    lowalloc::analyze::free_event e;
    e.thread = thread;
    e.stack = stack;
    e.size = size;
    e.matched = matched;
    t.on_free(e);
  }
  const lowalloc::analyze::burst_counts* of(std::uint32_t stack) const { return t.of(stack); }
};

TEST(Bursts, APhaseIsWhatAStackAllocatedSinceItsThreadsLatestBurst) {
  burst_feed f;
  // Phase 1: stack 1 allocates 20 blocks of 24 bytes, stack 2 one of 100; stack 2's is freed
  // early (a lone free: no burst), then the 20 together: a burst.
  for (int i = 0; i < 20; ++i) f.alloc(0, 1, 24);
  f.alloc(0, 2, 100);
  f.free(0, 2, 100);
  f.alloc(0, 3, 8);  // ends the lone free's run
  for (int i = 0; i < 20; ++i) f.free(0, 1, 24);
  // Phase 2: 16 blocks of stack 1 on thread 0; thread 1's frees do not end thread 0's phase.
  for (int i = 0; i < 16; ++i) f.alloc(0, 1, 40);
  f.alloc(1, 4, 8);
  for (int i = 0; i < 20; ++i) f.free(1, 9, 8, /*matched=*/false);  // unmatched: no burst
  f.alloc(1, 4, 8);
  for (int i = 0; i < 15; ++i) f.free(0, 1, 40);  // 15 frees: not a burst
  f.alloc(0, 3, 8);
  f.free(0, 1, 40);
  f.free(0, 3, 8);
  f.t.finish();
  const lowalloc::analyze::burst_counts* one = f.of(1);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->freed_in_bursts, 20u);
  ASSERT_EQ(one->phases.size(), 1u);
  EXPECT_EQ(one->phases[0].allocations, 20u);
  EXPECT_EQ(one->phases[0].bytes, 20u * 32);  // 24 bytes take 32 in an arena
  EXPECT_EQ(one->phases[0].burst_bytes, 20u * 32);
  EXPECT_EQ(f.of(2), nullptr);  // freed alone
  EXPECT_EQ(f.of(9), nullptr);  // never matched
}

TEST(Bursts, AStacksBlocksFreedBeforeTheBurstAreHeldByAnArena) {
  burst_feed f;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 30; ++i) f.alloc(0, 1, 64);
    for (int i = 0; i < 10; ++i) f.free(0, 1, 64);  // 10 frees: no burst yet
    f.alloc(0, 2, 16);
    for (int i = 0; i < 20; ++i) f.free(0, 1, 64);
    f.free(0, 2, 16);
  }
  f.t.finish();
  const lowalloc::analyze::burst_counts* one = f.of(1);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->freed_in_bursts, 60u);
  ASSERT_EQ(one->phases.size(), 3u);
  for (const lowalloc::analyze::burst_phase& p : one->phases) {
    EXPECT_EQ(p.allocations, 30u);
    EXPECT_EQ(p.bytes, 30u * 64);
    EXPECT_EQ(p.burst_bytes, 20u * 64);
  }
  const lowalloc::analyze::burst_counts* two = f.of(2);
  ASSERT_NE(two, nullptr);  // freed within each burst, after its phase's allocation
  EXPECT_EQ(two->freed_in_bursts, 3u);
}

TEST(Bursts, ALongBurstIsCountedWholeAcrossItsCompactions) {
  burst_feed f;
  constexpr int n = 100000;
  for (int i = 0; i < n; ++i) f.alloc(0, static_cast<std::uint32_t>(i % 7), 16);
  for (int i = 0; i < n; ++i) f.free(0, static_cast<std::uint32_t>(i % 7), 16);
  f.t.finish();  // the burst at the end of the trace
  std::uint64_t freed = 0;
  std::uint64_t allocations = 0;
  for (std::uint32_t s = 0; s < 7; ++s) {
    const lowalloc::analyze::burst_counts* c = f.of(s);
    ASSERT_NE(c, nullptr);
    freed += c->freed_in_bursts;
    ASSERT_EQ(c->phases.size(), 1u);
    allocations += c->phases[0].allocations;
    EXPECT_EQ(c->phases[0].bytes, c->phases[0].burst_bytes);
  }
  EXPECT_EQ(freed, static_cast<std::uint64_t>(n));
  EXPECT_EQ(allocations, static_cast<std::uint64_t>(n));
}

}  // namespace
