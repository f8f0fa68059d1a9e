// The counter itself: every allocation form is seen exactly once, per thread, and the GoogleTest
// macros fail when they should.
#include <lowalloc/alloc_count.hpp>

#include "support/escape.hpp"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <malloc.h>

#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <lowalloc/detail/config.hpp>

#if LOWALLOC_SANITIZER_OWNS_MALLOC
// The failure tests ask for 2^62 bytes: a sanitizer must answer with null, not abort.
extern "C" const char* __asan_default_options();
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

namespace {

using lowalloc::test::escape;

struct alignas(64) over_aligned {
  char bytes[64];
};

TEST(AllocCount, OperatorNewForms) {
  lowalloc::alloc_counter c;
  void* a = ::operator new(10);
  void* b = ::operator new[](20);
  void* d = ::operator new(30, std::nothrow);
  void* e = ::operator new[](40, std::nothrow);
  void* f = ::operator new (50, std::align_val_t{64});
  void* g = ::operator new[](60, std::align_val_t{128});
  void* h = ::operator new (70, std::align_val_t{256}, std::nothrow);
  EXPECT_EQ(c.allocations(), 7u);
  EXPECT_EQ(c.bytes(), 10u + 20 + 30 + 40 + 50 + 60 + 70);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(f) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(g) % 128, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(h) % 256, 0u);
  EXPECT_EQ(c.deallocations(), 0u);
  ::operator delete(a);
  ::operator delete[](b);
  ::operator delete(d, std::nothrow);
  ::operator delete[](e, 40);
  ::operator delete (f, std::align_val_t{64});
  ::operator delete[](g, 60, std::align_val_t{128});
  ::operator delete (h, std::align_val_t{256}, std::nothrow);
  EXPECT_EQ(c.deallocations(), 7u);
  EXPECT_EQ(c.allocations(), 7u);
}

TEST(AllocCount, NewExpressions) {
  lowalloc::alloc_counter c;
  auto* i = new int(3);
  escape(i);
  auto* arr = new std::string[3];
  escape(arr);
  auto* big = new over_aligned;
  escape(big);
  EXPECT_EQ(c.allocations(), 3u);
  delete i;
  delete[] arr;
  delete big;
  EXPECT_EQ(c.deallocations(), 3u);
}

TEST(AllocCount, DeleteOfNullIsNotCounted) {
  lowalloc::alloc_counter c;
  ::operator delete(nullptr);
  std::free(nullptr);
  EXPECT_EQ(c.deallocations(), 0u);
}

TEST(AllocCount, ZeroSizedNewIsAnAllocation) {
  lowalloc::alloc_counter c;
  void* p = ::operator new(0);
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(c.allocations(), 1u);
  ::operator delete(p);
}

TEST(AllocCount, FailedNewIsNotCounted) {
  const std::size_t huge = std::size_t(1) << 62;
  EXPECT_THROW(escape(::operator new(huge)), std::bad_alloc);
  lowalloc::alloc_counter c;  // (throwing bad_alloc itself allocates the exception object)
  EXPECT_EQ(::operator new(huge, std::nothrow), nullptr);
  EXPECT_EQ(::operator new[](huge, std::align_val_t{64}, std::nothrow), nullptr);
  EXPECT_EQ(c.allocations(), 0u);
}

TEST(AllocCount, NewHandlerIsCalledBeforeGivingUp) {
  static int calls = 0;
  calls = 0;
  std::new_handler old = std::set_new_handler([] {
    if (++calls == 3) std::set_new_handler(nullptr);
  });
  EXPECT_THROW(escape(::operator new(std::size_t(1) << 62)), std::bad_alloc);
  std::set_new_handler(old);
  EXPECT_EQ(calls, 3);
}

TEST(AllocCount, MallocFamily) {
  if (!lowalloc::malloc_counted()) GTEST_SKIP() << "malloc is owned by a sanitizer here";
  lowalloc::alloc_counter c;
  void* a = std::malloc(16);
  escape(a);
  void* b = std::calloc(4, 8);
  escape(b);
  EXPECT_EQ(c.allocations(), 2u);
  EXPECT_EQ(c.bytes(), 16u + 32u);

  // realloc(p, n): one allocation of n and one free of p.
  a = std::realloc(a, 4096);
  escape(a);
  EXPECT_EQ(c.allocations(), 3u);
  EXPECT_EQ(c.deallocations(), 1u);
  // realloc(NULL, n) is a malloc.
  void* r = std::realloc(nullptr, 8);
  escape(r);
  EXPECT_EQ(c.allocations(), 4u);
  EXPECT_EQ(c.deallocations(), 1u);
  void* ra = reallocarray(nullptr, 3, 5);
  escape(ra);
  EXPECT_EQ(c.allocations(), 5u);
  EXPECT_EQ(c.bytes(), 16u + 32u + 4096u + 8u + 15u);
  volatile std::size_t large = std::size_t(1) << 40;
  EXPECT_EQ(reallocarray(nullptr, large, large), nullptr);
  EXPECT_EQ(c.allocations(), 5u);

  void* al = aligned_alloc(64, 128);
  void* pm = nullptr;
  ASSERT_EQ(posix_memalign(&pm, 32, 100), 0);
  void* ma = memalign(128, 10);
  void* va = valloc(10);
  void* pv = pvalloc(10);
  EXPECT_EQ(c.allocations(), 10u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(al) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(pm) % 32, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(ma) % 128, 0u);
  void* bad = nullptr;
  EXPECT_EQ(posix_memalign(&bad, 3, 10), EINVAL);
  EXPECT_EQ(c.allocations(), 10u);

  for (void* p : {a, b, r, ra, al, pm, ma, va, pv}) std::free(p);
  EXPECT_EQ(c.deallocations(), 10u);
}

TEST(AllocCount, ReallocToZeroFrees) {
  if (!lowalloc::malloc_counted()) GTEST_SKIP() << "malloc is owned by a sanitizer here";
  void* p = std::malloc(32);
  escape(p);
  lowalloc::alloc_counter c;
  void* q = std::realloc(p, 0);  // glibc frees and returns NULL
  escape(q);
  EXPECT_EQ(c.deallocations(), 1u);
  std::free(q);
}

TEST(AllocCount, StandardContainers) {
  lowalloc::alloc_counter c;
  {
    std::vector<int> v;
    v.reserve(100);
    for (int i = 0; i < 100; ++i) v.push_back(i);
    escape(v.data());
  }
  EXPECT_EQ(c.allocations(), 1u);
  EXPECT_EQ(c.bytes(), 100 * sizeof(int));
  EXPECT_EQ(c.deallocations(), 1u);
  auto sp = std::make_shared<int>(1);
  escape(sp.get());
  EXPECT_EQ(c.allocations(), 2u);
}

TEST(AllocCount, CountsOnlyTheCallingThread) {
  lowalloc::alloc_counter c;
  std::size_t other_thread = 0;
  // The thread's own start-up may allocate on this thread (its state block); measure only the
  // allocations made inside it.
  std::thread t([&] {
    lowalloc::alloc_counter inner;
    for (int i = 0; i < 50; ++i) {
      void* p = ::operator new(8);
      ::operator delete(p);
    }
    other_thread = inner.allocations();
  });
  t.join();
  EXPECT_EQ(other_thread, 50u);
  EXPECT_LT(c.allocations(), 50u);
}

TEST(AllocCount, ResetStartsAgain) {
  lowalloc::alloc_counter c;
  escape(std::unique_ptr<int>(new int(1)).get());
  EXPECT_EQ(c.allocations(), 1u);
  c.reset();
  EXPECT_EQ(c.allocations(), 0u);
  EXPECT_EQ(c.bytes(), 0u);
}

// Live bytes are usable sizes (malloc_usable_size: the request itself under ASan). An aligned
// block's usable size depends on where the heap put it, so the figures are read from the blocks;
// the counts are read before any assertion (a failing one allocates its message).
TEST(AllocCount, LiveBytesAndPeak) {
  if (!lowalloc::live_bytes_counted()) GTEST_SKIP() << "no malloc_usable_size here";
  const lowalloc::alloc_totals before = lowalloc::thread_alloc_totals();
  const std::ptrdiff_t saved_peak = lowalloc::exchange_thread_peak(before.live_bytes);
  void* a = ::operator new(24);
  escape(a);
  void* b = ::operator new (40, std::align_val_t{32});
  escape(b);
  const auto size_a = static_cast<std::ptrdiff_t>(malloc_usable_size(a));
  const auto size_b = static_cast<std::ptrdiff_t>(malloc_usable_size(b));
  const std::ptrdiff_t both = lowalloc::thread_alloc_totals().live_bytes - before.live_bytes;
  ::operator delete(a);
  const std::ptrdiff_t one = lowalloc::thread_alloc_totals().live_bytes - before.live_bytes;
  ::operator delete (b, std::align_val_t{32});
  const lowalloc::alloc_totals after = lowalloc::thread_alloc_totals();
  const std::ptrdiff_t peak = lowalloc::exchange_thread_peak(saved_peak);
  EXPECT_GE(size_a, 24);
  EXPECT_GE(size_b, 40);
  EXPECT_EQ(both, size_a + size_b);
  EXPECT_EQ(one, size_b);
  EXPECT_EQ(after.live_bytes, before.live_bytes);
  EXPECT_EQ(after.peak_live_bytes - before.live_bytes, size_a + size_b);
  EXPECT_EQ(peak, after.peak_live_bytes);
}

// A block allocated on one thread and freed on another raises the first's live bytes and lowers
// the second's.
TEST(AllocCount, LiveBytesArePerThread) {
  if (!lowalloc::live_bytes_counted()) GTEST_SKIP() << "no malloc_usable_size here";
  void* p = nullptr;
  std::ptrdiff_t held_there = 0;
  std::thread t([&] {
    const std::ptrdiff_t start = lowalloc::thread_alloc_totals().live_bytes;
    p = ::operator new(40);
    held_there = lowalloc::thread_alloc_totals().live_bytes - start;
  });
  t.join();
  EXPECT_EQ(held_there, 40);
  const std::ptrdiff_t before = lowalloc::thread_alloc_totals().live_bytes;
  ::operator delete(p);
  EXPECT_EQ(lowalloc::thread_alloc_totals().live_bytes - before, -40);
}

TEST(AllocCount, ReallocMovesLiveBytes) {
  if (!lowalloc::malloc_counted()) GTEST_SKIP() << "malloc is owned by a sanitizer here";
  const std::ptrdiff_t before = lowalloc::thread_alloc_totals().live_bytes;
  void* p = std::malloc(24);
  escape(p);
  p = std::realloc(p, 4000);
  escape(p);
  EXPECT_EQ(lowalloc::thread_alloc_totals().live_bytes - before,
            static_cast<std::ptrdiff_t>(malloc_usable_size(p)));
  p = std::realloc(p, 0);  // glibc frees and returns NULL
  escape(p);
  EXPECT_EQ(lowalloc::thread_alloc_totals().live_bytes, before);
  std::free(p);
}

TEST(AllocCount, MacrosPass) {
  std::vector<int> v;
  v.reserve(4);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.push_back(1); v.push_back(2));
  LOWALLOC_EXPECT_ALLOCATIONS(1, v.reserve(100));
  LOWALLOC_ASSERT_ALLOCATIONS(2, escape(std::make_unique<int>(1).get());
                              escape(std::make_unique<int>(2).get()));
  LOWALLOC_EXPECT_AT_MOST_ALLOCATIONS(1, v.shrink_to_fit());
  LOWALLOC_ASSERT_NO_ALLOCATIONS(v.clear());
}

std::vector<int>* g_vec = nullptr;

TEST(AllocCount, MacrosFailWhenTheyShould) {
  std::vector<int> v;
  g_vec = &v;
  EXPECT_NONFATAL_FAILURE(LOWALLOC_EXPECT_NO_ALLOCATIONS(g_vec->push_back(1)),
                          "heap allocations made by: g_vec->push_back(1)");
  EXPECT_NONFATAL_FAILURE(LOWALLOC_EXPECT_ALLOCATIONS(2, g_vec->reserve(1000)), "Which is: 1");
  EXPECT_NONFATAL_FAILURE(LOWALLOC_EXPECT_AT_MOST_ALLOCATIONS(0, g_vec->reserve(100000)),
                          "heap allocations");
  EXPECT_FATAL_FAILURE(LOWALLOC_ASSERT_NO_ALLOCATIONS(g_vec->reserve(1000000)), "heap allocations");
  g_vec = nullptr;
}

}  // namespace
