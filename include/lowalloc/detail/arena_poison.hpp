// lowalloc/detail/arena_poison.hpp — AddressSanitizer annotations for the arena. Internal: not
// part of the API.
//
// Under ASan the arena poisons every byte it has not handed out, and everything it takes back on
// release() or reset(), so a read of arena memory after reset() is reported where it happens
// ("use-after-poison"). Without ASan the functions are empty.
#ifndef LOWALLOC_DETAIL_ARENA_POISON_HPP
#define LOWALLOC_DETAIL_ARENA_POISON_HPP

#include <lowalloc/detail/config.hpp>

#include <cstddef>

#ifndef LOWALLOC_ARENA_POISON
#if defined(__SANITIZE_ADDRESS__)
#define LOWALLOC_ARENA_POISON 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOWALLOC_ARENA_POISON 1
#endif
#endif
#ifndef LOWALLOC_ARENA_POISON
#define LOWALLOC_ARENA_POISON 0
#endif
#endif

#if LOWALLOC_ARENA_POISON
#include <sanitizer/asan_interface.h>
#endif

namespace lowalloc {
namespace detail {

#if LOWALLOC_ARENA_POISON
// Poisoned bytes left after each block. Blocks start on 16-byte boundaries, so two blocks never
// share a shadow granule (8 bytes) and the gap between them stays poisoned.
inline constexpr std::size_t arena_redzone = 16;
#else
inline constexpr std::size_t arena_redzone = 0;
#endif

inline void arena_poison([[maybe_unused]] const void* p, [[maybe_unused]] std::size_t n) noexcept {
#if LOWALLOC_ARENA_POISON
  // Poisoning reads nothing, but GCC 12 sees an arena's inline buffer, not written yet, passed
  // as a `const volatile void*` and warns (-Wmaybe-uninitialized) in the user's build.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
  if (n != 0) __asan_poison_memory_region(p, n);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif
}

inline void arena_unpoison([[maybe_unused]] const void* p,
                           [[maybe_unused]] std::size_t n) noexcept {
#if LOWALLOC_ARENA_POISON
  if (n != 0) __asan_unpoison_memory_region(p, n);
#endif
}

}  // namespace detail
}  // namespace lowalloc

#endif  // LOWALLOC_DETAIL_ARENA_POISON_HPP
