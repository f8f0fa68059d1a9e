// lowalloc/alloc_count.hpp — count the heap allocations a piece of code makes.
//
// Link `lowalloc::alloc_count` into a test executable and every global operator new/delete (all
// forms: plain, array, nothrow, aligned, sized) is counted per thread; on glibc the malloc family
// (malloc, calloc, realloc, reallocarray, free, aligned_alloc, posix_memalign, memalign, valloc,
// pvalloc) is counted too, unless the program is built with a sanitizer that owns malloc (then
// only operator new/delete are counted; see `malloc_counted()`).
//
// Counting never allocates and takes no lock: each thread has its own counters, and a scope reads
// the difference between its construction and now. Only the calling thread's work is counted.
// Where the C library tells a block's size (malloc_usable_size: glibc, musl, the sanitizers'
// allocators; see `live_bytes_counted()`), each thread also keeps the bytes it holds and their
// peak, which <lowalloc/benchmark.hpp> reports as Google Benchmark's max_bytes_used.
//
//   #include <lowalloc/alloc_count.hpp>
//
//   TEST(Parser, ShortTokensDoNotAllocate) {
//     lowalloc::small_vector<int, 8> v;
//     LOWALLOC_EXPECT_NO_ALLOCATIONS(for (int i = 0; i < 8; ++i) v.push_back(i));
//     LOWALLOC_EXPECT_ALLOCATIONS(1, v.push_back(8));   // the spill to the heap
//
//     lowalloc::alloc_counter scope;                    // or count by hand
//     v.shrink_to_fit();
//     EXPECT_EQ(scope.allocations(), 0u);
//   }
//
// The LOWALLOC_EXPECT_* / LOWALLOC_ASSERT_* macros expand to GoogleTest assertions, so they need
// <gtest/gtest.h> only where they are used; the rest of the header does not depend on GoogleTest.
#ifndef LOWALLOC_ALLOC_COUNT_HPP
#define LOWALLOC_ALLOC_COUNT_HPP

#include <cstddef>

namespace lowalloc {

/// Running totals of the calling thread's heap activity since the thread started.
///
/// `live_bytes` and `peak_live_bytes` are usable sizes (malloc_usable_size: the block the
/// allocator handed out, e.g. 24 bytes for a 10-byte request on glibc x86-64; exactly the
/// requested size under ASan), because a free does not say how many bytes were requested. They
/// are the bytes this thread allocated minus those it freed, so a thread that frees another
/// thread's blocks can go below zero. Both stay 0 where `live_bytes_counted()` is false.
struct alloc_totals {
  std::size_t allocations = 0;    ///< successful allocation calls (realloc to a new size counts)
  std::size_t deallocations = 0;  ///< frees of non-null pointers (realloc's release counts)
  std::size_t bytes = 0;          ///< bytes requested by the counted allocations
  std::ptrdiff_t live_bytes = 0;  ///< usable bytes allocated minus usable bytes freed
  /// The highest `live_bytes` since the thread started or the last `exchange_thread_peak()`.
  std::ptrdiff_t peak_live_bytes = 0;
};

/// The calling thread's totals. Never allocates.
alloc_totals thread_alloc_totals() noexcept;

/// Sets the calling thread's `peak_live_bytes` to `peak` and returns the previous peak. To
/// measure the peak of a scope: `old = exchange_thread_peak(thread_alloc_totals().live_bytes)`
/// at its start; at its end read the peak, then put back the larger of the two with
/// `exchange_thread_peak`, so that an enclosing scope still sees its own peak. Never allocates.
std::ptrdiff_t exchange_thread_peak(std::ptrdiff_t peak) noexcept;

/// True when the malloc family is counted, not only operator new/delete.
bool malloc_counted() noexcept;

/// True when `live_bytes` and `peak_live_bytes` are counted (the C library has
/// malloc_usable_size or malloc_size); false elsewhere, where they stay 0.
bool live_bytes_counted() noexcept;

namespace detail {
// Defined in alloc_count's library: <lowalloc/benchmark.hpp> calls it, so that a program that does
// not link lowalloc::alloc_count fails to link with this name in the error.
void benchmark_memory_manager_needs_lowalloc_alloc_count() noexcept;
}  // namespace detail

/// Counts the calling thread's allocations from its construction on.
class alloc_counter {
 public:
  alloc_counter() noexcept : start_(thread_alloc_totals()) {}

  /// Allocations made by this thread since construction (or the last reset()).
  std::size_t allocations() const noexcept {
    return thread_alloc_totals().allocations - start_.allocations;
  }
  /// Deallocations made by this thread since construction (or the last reset()).
  std::size_t deallocations() const noexcept {
    return thread_alloc_totals().deallocations - start_.deallocations;
  }
  /// Bytes requested by this thread's allocations since construction (or the last reset()).
  std::size_t bytes() const noexcept { return thread_alloc_totals().bytes - start_.bytes; }

  /// Starts counting again from zero.
  void reset() noexcept { start_ = thread_alloc_totals(); }

 private:
  alloc_totals start_;
};

}  // namespace lowalloc

// Runs the statement(s) in a scope of their own and stores the allocations they made in `count`.
#define LOWALLOC_DETAIL_COUNT_ALLOCATIONS(count, ...) \
  std::size_t count = 0;                              \
  {                                                   \
    ::lowalloc::alloc_counter lowalloc_counter_;      \
    __VA_ARGS__;                                      \
    count = lowalloc_counter_.allocations();          \
  }

/// EXPECT that the statement makes exactly `n` heap allocations on this thread.
#define LOWALLOC_EXPECT_ALLOCATIONS(n, ...)                         \
  do {                                                              \
    LOWALLOC_DETAIL_COUNT_ALLOCATIONS(lowalloc_count_, __VA_ARGS__) \
    EXPECT_EQ(lowalloc_count_, static_cast<std::size_t>(n))         \
        << "heap allocations made by: " #__VA_ARGS__;               \
  } while (false)

/// ASSERT that the statement makes exactly `n` heap allocations on this thread.
#define LOWALLOC_ASSERT_ALLOCATIONS(n, ...)                         \
  do {                                                              \
    LOWALLOC_DETAIL_COUNT_ALLOCATIONS(lowalloc_count_, __VA_ARGS__) \
    ASSERT_EQ(lowalloc_count_, static_cast<std::size_t>(n))         \
        << "heap allocations made by: " #__VA_ARGS__;               \
  } while (false)

/// EXPECT that the statement makes at most `n` heap allocations on this thread.
#define LOWALLOC_EXPECT_AT_MOST_ALLOCATIONS(n, ...)                 \
  do {                                                              \
    LOWALLOC_DETAIL_COUNT_ALLOCATIONS(lowalloc_count_, __VA_ARGS__) \
    EXPECT_LE(lowalloc_count_, static_cast<std::size_t>(n))         \
        << "heap allocations made by: " #__VA_ARGS__;               \
  } while (false)

/// EXPECT that the statement makes no heap allocation on this thread.
#define LOWALLOC_EXPECT_NO_ALLOCATIONS(...) LOWALLOC_EXPECT_ALLOCATIONS(0, __VA_ARGS__)
/// ASSERT that the statement makes no heap allocation on this thread.
#define LOWALLOC_ASSERT_NO_ALLOCATIONS(...) LOWALLOC_ASSERT_ALLOCATIONS(0, __VA_ARGS__)

#endif  // LOWALLOC_ALLOC_COUNT_HPP
