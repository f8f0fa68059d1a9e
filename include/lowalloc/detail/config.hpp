// lowalloc/detail/config.hpp — feature macros. Internal: not part of the API.
//
// Every macro is derived from the compiler's own feature tests and wrapped in #ifndef, so a user
// can override any of them on the command line.
#ifndef LOWALLOC_DETAIL_CONFIG_HPP
#define LOWALLOC_DETAIL_CONFIG_HPP

#include <cstdlib>
#if defined(__has_include)
#if __has_include(<version>)
#include <version>
#endif
#endif

// <memory_resource> (std::pmr): libstdc++ 9+, libc++ 16+ (libc++ 14, Debian 12's, has only
// <experimental/memory_resource>). Without it, small_vector, inplace_vector and the strings work
// as before, less lowalloc::pmr's aliases; arena and pool need it.
#ifndef LOWALLOC_HAS_MEMORY_RESOURCE
#if defined(__has_include)
#if __has_include(<memory_resource>)
#define LOWALLOC_HAS_MEMORY_RESOURCE 1
#endif
#endif
#ifndef LOWALLOC_HAS_MEMORY_RESOURCE
#define LOWALLOC_HAS_MEMORY_RESOURCE 0
#endif
#endif

#ifndef LOWALLOC_HAS_EXCEPTIONS
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define LOWALLOC_HAS_EXCEPTIONS 1
#else
#define LOWALLOC_HAS_EXCEPTIONS 0
#endif
#endif

#ifndef LOWALLOC_HAS_CXX20
#if __cplusplus >= 202002L
#define LOWALLOC_HAS_CXX20 1
#else
#define LOWALLOC_HAS_CXX20 0
#endif
#endif

#ifndef LOWALLOC_HAS_THREE_WAY_COMPARISON
#if defined(__cpp_impl_three_way_comparison) && defined(__cpp_lib_three_way_comparison)
#define LOWALLOC_HAS_THREE_WAY_COMPARISON 1
#else
#define LOWALLOC_HAS_THREE_WAY_COMPARISON 0
#endif
#endif

#ifndef LOWALLOC_HAS_CONCEPTS
#if defined(__cpp_concepts) && defined(__cpp_lib_concepts)
#define LOWALLOC_HAS_CONCEPTS 1
#else
#define LOWALLOC_HAS_CONCEPTS 0
#endif
#endif

#ifndef LOWALLOC_HAS_RANGES
#if defined(__cpp_lib_ranges)
#define LOWALLOC_HAS_RANGES 1
#else
#define LOWALLOC_HAS_RANGES 0
#endif
#endif

// Debug checks (bounds in operator[], front/back/pop_back on empty, ...).
#ifndef LOWALLOC_ASSERTIONS
#if defined(_GLIBCXX_ASSERTIONS) || defined(_LIBCPP_ENABLE_ASSERTIONS)
#define LOWALLOC_ASSERTIONS 1
#else
#define LOWALLOC_ASSERTIONS 0
#endif
#endif

// lowalloc::pool and synchronized_pool say on stderr, once per pool, that a request was larger
// than their slots (it goes to upstream, uncounted by the slots). On with the debug checks and in
// builds without NDEBUG; define it to 0 or 1 to choose.
#ifndef LOWALLOC_POOL_WARN_OVERSIZE
#if LOWALLOC_ASSERTIONS || !defined(NDEBUG)
#define LOWALLOC_POOL_WARN_OVERSIZE 1
#else
#define LOWALLOC_POOL_WARN_OVERSIZE 0
#endif
#endif

// A sanitizer that replaces malloc itself (ASan, TSan, MSan, HWASan): lowalloc then never calls
// or replaces the C allocator behind the allocator's back.
#ifndef LOWALLOC_SANITIZER_OWNS_MALLOC
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(__SANITIZE_HWADDRESS__)
#define LOWALLOC_SANITIZER_OWNS_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer) || __has_feature(hwaddress_sanitizer)
#define LOWALLOC_SANITIZER_OWNS_MALLOC 1
#endif
#endif
#ifndef LOWALLOC_SANITIZER_OWNS_MALLOC
#define LOWALLOC_SANITIZER_OWNS_MALLOC 0
#endif
#endif

// Leak hunting: 1 sends every lowalloc::arena allocation straight to the global operator new (one
// heap block each, freed on release/reset/destruction), so valgrind and ASan see every block.
// Define it the same way in every translation unit (the arena's inline code depends on it).
#ifndef LOWALLOC_ARENA_USE_MALLOC
#define LOWALLOC_ARENA_USE_MALLOC 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define LOWALLOC_LIKELY(x) __builtin_expect(!!(x), 1)
#define LOWALLOC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define LOWALLOC_NOINLINE __attribute__((noinline))
#define LOWALLOC_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define LOWALLOC_LIKELY(x) (x)
#define LOWALLOC_UNLIKELY(x) (x)
#define LOWALLOC_NOINLINE __declspec(noinline)
#define LOWALLOC_ALWAYS_INLINE __forceinline
#endif

// GCC 12's middle-end warnings fire in the user's -O2/-O3 build on paths of the containers and
// strings that it cannot prove impossible: a negative memmove size when inserting at end()
// (returned early), more than N inline elements or a size past the inline capacity (never), the
// heap words of an inline string read behind a flag test it does not connect to them
// (-Wmaybe-uninitialized), an overlap of a fresh allocation with the old buffer on a size it
// cannot bound (-Wrestrict). They are false positives that -Werror would turn into errors; the
// code between _BEGIN and _END is compiled without them. GCC only: Clang does not know most of
// these warnings.
#if defined(__GNUC__) && !defined(__clang__)
// clang-format off
#define LOWALLOC_SUPPRESS_GCC_FALSE_POSITIVES_BEGIN               \
  _Pragma("GCC diagnostic push")                                  \
  _Pragma("GCC diagnostic ignored \"-Wstringop-overflow\"")       \
  _Pragma("GCC diagnostic ignored \"-Warray-bounds\"")            \
  _Pragma("GCC diagnostic ignored \"-Wstringop-overread\"")       \
  _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")     \
  _Pragma("GCC diagnostic ignored \"-Wrestrict\"")
// clang-format on
#define LOWALLOC_SUPPRESS_GCC_FALSE_POSITIVES_END _Pragma("GCC diagnostic pop")
#else
#define LOWALLOC_SUPPRESS_GCC_FALSE_POSITIVES_BEGIN
#define LOWALLOC_SUPPRESS_GCC_FALSE_POSITIVES_END
#endif

#include <cstdio>

namespace lowalloc {
namespace detail {

[[noreturn]] inline void assertion_failed(const char* expr, const char* file, int line) noexcept {
  std::fprintf(stderr, "%s:%d: lowalloc assertion failed: %s\n", file, line, expr);
  std::abort();
}

}  // namespace detail
}  // namespace lowalloc

// A fact the optimiser may rely on (and that silences its warnings on impossible paths).
#if defined(__GNUC__) || defined(__clang__)
#define LOWALLOC_ASSUME(cond) (LOWALLOC_LIKELY(cond) ? void(0) : __builtin_unreachable())
#else
#define LOWALLOC_ASSUME(cond) void(0)
#endif

#if LOWALLOC_ASSERTIONS
#define LOWALLOC_ASSERT(cond)      \
  (LOWALLOC_LIKELY(cond) ? void(0) \
                         : ::lowalloc::detail::assertion_failed(#cond, __FILE__, __LINE__))
#else
#define LOWALLOC_ASSERT(cond) void(0)
#endif

// Throwing without exceptions prints the reason and aborts: a working -fno-exceptions mode.
#if LOWALLOC_HAS_EXCEPTIONS
#define LOWALLOC_THROW(ex) throw ex
#define LOWALLOC_TRY try
#define LOWALLOC_CATCH_ALL catch (...)
#define LOWALLOC_RETHROW throw
#else
#define LOWALLOC_THROW(ex) \
  ::lowalloc::detail::assertion_failed("exception: " #ex, __FILE__, __LINE__)
#define LOWALLOC_TRY if (true)
#define LOWALLOC_CATCH_ALL else
#define LOWALLOC_RETHROW void(0)
#endif

#endif  // LOWALLOC_DETAIL_CONFIG_HPP
