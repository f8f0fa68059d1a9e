// The real functions' lookup and the bootstrap buffer (bootstrap.hpp).
#include "trace/bootstrap.hpp"

#include <sched.h>

#include <cstring>

namespace lowalloc::trace {

real_functions real;
std::atomic<int> resolve_state{0};
__thread bool tls_resolving;

// Never freed: static memory is zero, which calloc relies on.
alignas(64) unsigned char bootstrap_buffer[bootstrap_bytes];

namespace {

std::atomic<std::size_t> bootstrap_used{0};

template <class F>
void resolve_one(F& slot, const char* name) {
  slot = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

}  // namespace

void resolve_real_functions() {
  int expected = 0;
  if (resolve_state.compare_exchange_strong(expected, 1)) {
    tls_resolving = true;
#define LOWALLOC_RESOLVE(shape, name, member, result, params, args) resolve_one(real.member, #name);
    LOWALLOC_HOOKS(LOWALLOC_RESOLVE)
#undef LOWALLOC_RESOLVE
    resolve_operators();
    tls_resolving = false;
    resolve_state.store(2, std::memory_order_release);
    return;
  }
  while (resolve_state.load(std::memory_order_acquire) != 2) sched_yield();
}

void* bootstrap_alloc(std::size_t n, std::size_t align) {
  std::size_t used = bootstrap_used.load(std::memory_order_relaxed);
  for (;;) {
    std::size_t start = (used + align - 1) & ~(align - 1);
    if (start + n > sizeof bootstrap_buffer) return nullptr;
    if (bootstrap_used.compare_exchange_weak(used, start + n)) return bootstrap_buffer + start;
  }
}

void* bootstrap_realloc(void* ptr, std::size_t size) {
  // Moving a bootstrap block to the real heap: its size is unknown, copy what fits.
  void* p = ready() ? real.malloc(size) : bootstrap_alloc(size);
  if (p != nullptr && ptr != nullptr) {
    auto used = bootstrap_used.load();
    auto offset = static_cast<std::size_t>(static_cast<unsigned char*>(ptr) - bootstrap_buffer);
    std::size_t avail = used - offset;
    std::memcpy(p, ptr, avail < size ? avail : size);
  }
  return p;
}

}  // namespace lowalloc::trace
