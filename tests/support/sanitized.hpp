// LOWALLOC_TEST_SANITIZED: 1 in a build under AddressSanitizer or ThreadSanitizer (GCC or clang),
// where a sanitizer's allocator and shadow memory make RSS meaningless. Not part of lowalloc's
// API.
#ifndef LOWALLOC_TESTS_SUPPORT_SANITIZED_HPP
#define LOWALLOC_TESTS_SUPPORT_SANITIZED_HPP

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LOWALLOC_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LOWALLOC_TEST_SANITIZED 1
#endif
#endif
#ifndef LOWALLOC_TEST_SANITIZED
#define LOWALLOC_TEST_SANITIZED 0
#endif

#endif
