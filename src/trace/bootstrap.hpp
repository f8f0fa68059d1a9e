// The real allocation functions, looked up with dlsym on first use, and the static buffer that
// serves the allocations made while that lookup runs (dlsym may call calloc). Every hook asks
// ready() first; blocks of the bootstrap buffer are never passed to the real free.
#ifndef LOWALLOC_SRC_TRACE_BOOTSTRAP_HPP
#define LOWALLOC_SRC_TRACE_BOOTSTRAP_HPP

#include "trace/hooks.hpp"
#include "trace/os.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>

#pragma GCC visibility push(hidden)

namespace lowalloc::trace {

#define LOWALLOC_REAL_FUNCTION(shape, name, member, result, params, args) result(*member) params;
struct real_functions {
  LOWALLOC_HOOKS(LOWALLOC_REAL_FUNCTION)
};
#undef LOWALLOC_REAL_FUNCTION

extern real_functions real;
extern std::atomic<int> resolve_state;  // 0 not started, 1 resolving, 2 done
extern __thread bool tls_resolving;

// Looks every real function up (or waits for the thread that does).
void resolve_real_functions();

// Looks up the next definition of each C++ allocation operator (operators.cpp) not found yet.
void resolve_operators();

// True when the real functions can be called; false while this thread is resolving them.
inline bool ready() {
  if (LOWALLOC_LIKELY(resolve_state.load(std::memory_order_acquire) == 2)) return true;
  if (tls_resolving) return false;
  resolve_real_functions();
  return !tls_resolving;
}

inline constexpr std::size_t bootstrap_bytes = 64 * 1024;
extern unsigned char bootstrap_buffer[bootstrap_bytes];

inline bool in_bootstrap(const void* p) {
  auto a = reinterpret_cast<std::uintptr_t>(p);
  auto lo = reinterpret_cast<std::uintptr_t>(bootstrap_buffer);
  return a >= lo && a < lo + sizeof bootstrap_buffer;
}

// A block of the bootstrap buffer, or nullptr when it is used up.
void* bootstrap_alloc(std::size_t n, std::size_t align = 16);

// realloc of a bootstrap block (or while not ready): a new block, the old one's bytes copied.
void* bootstrap_realloc(void* ptr, std::size_t size);

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_BOOTSTRAP_HPP
