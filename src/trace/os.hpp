// Small helpers for the recorder, which has no C++ runtime and must not allocate through the
// program's malloc: anonymous memory, whole writes, one-line messages, branch hints.
#ifndef LOWALLOC_SRC_TRACE_OS_HPP
#define LOWALLOC_SRC_TRACE_OS_HPP

#include <sys/mman.h>

#include <cstddef>

#define LOWALLOC_LIKELY(x) __builtin_expect(!!(x), 1)
#define LOWALLOC_UNLIKELY(x) __builtin_expect(!!(x), 0)

#pragma GCC visibility push(hidden)

namespace lowalloc::trace {

// Zero-filled private memory, or nullptr. `populate`: its pages are made at once, for a table
// that is about to be written all over (a hash table growing): page by page, its reads first
// mapped the shared zero page and its writes then faulted again to replace it.
inline void* map_memory(std::size_t bytes, bool populate = false) {
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// Writes all of [s, s + n) to fd, retrying after signals; gives up on an error.
void write_all(int fd, const char* s, std::size_t n);

// "lowalloc: " a b c d on stderr, as one line.
void say(const char* a, const char* b = "", const char* c = "", const char* d = "");

// Asks the kernel to make process_barrier() cheap (membarrier's private expedited command). Call
// once at start, and again in a fork child.
void prepare_process_barrier();

// A full memory barrier on every thread of the process, run by the caller alone: a store another
// thread made before it is visible after it, and a store the caller made before it is visible to
// every load another thread makes after it. This lets a hot path order a store and a load with a
// compiler barrier only, the rare side paying for both (membarrier(2); without it, an mprotect
// whose TLB shootdown interrupts every CPU that runs the process).
void process_barrier();

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_OS_HPP
