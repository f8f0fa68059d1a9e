// Allocation counting for tests: replaces the global operator new/delete and, on glibc without a
// sanitizer, the malloc family. Every replacement counts into thread-local integers and forwards
// to the C library's own allocator, so nothing here allocates, locks or recurses.
//
// Live bytes need the size of a block when it is freed, which neither free() nor unsized delete
// says. A header in front of each block would say it, but would break blocks that cross between
// the counted and the uncounted allocator (a library's __libc_malloc, a sanitizer's allocator);
// sized delete covers only part of the frees. So both sides of the count ask the C library for the
// block's usable size (malloc_usable_size), which is the same at allocation and at free: the
// count is exact, in the allocator's units rather than the program's requests.
#include <lowalloc/alloc_count.hpp>
#include <lowalloc/detail/config.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#elif defined(__APPLE__)
#include <malloc/malloc.h>
#endif

// The malloc family can be replaced safely only on glibc (which supports it and exports its own
// allocator as __libc_*), and never under a sanitizer, which owns malloc itself.
#ifndef LOWALLOC_COUNT_MALLOC
#if defined(__GLIBC__) && !LOWALLOC_SANITIZER_OWNS_MALLOC
#define LOWALLOC_COUNT_MALLOC 1
#else
#define LOWALLOC_COUNT_MALLOC 0
#endif
#endif

// Live bytes: where the C library (or the sanitizer that owns malloc) tells a block's usable size.
#ifndef LOWALLOC_COUNT_LIVE_BYTES
#if defined(__GLIBC__) || defined(__linux__) || defined(__APPLE__)
#define LOWALLOC_COUNT_LIVE_BYTES 1
#else
#define LOWALLOC_COUNT_LIVE_BYTES 0
#endif
#endif

#if LOWALLOC_COUNT_MALLOC
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void __libc_free(void*);
void* __libc_memalign(std::size_t, std::size_t);
void* __libc_valloc(std::size_t);
void* __libc_pvalloc(std::size_t);
}
#endif

namespace {

#if defined(__GNUC__)
#define LOWALLOC_DETAIL_TLS __attribute__((tls_model("initial-exec")))
#else
#define LOWALLOC_DETAIL_TLS
#endif

// Constant-initialised, so reading it never runs (or allocates for) a TLS initialiser.
thread_local lowalloc::alloc_totals totals LOWALLOC_DETAIL_TLS;

// The usable size of a live block (0 where it cannot be known). Read before the block is freed.
inline std::ptrdiff_t usable_size(void* p) noexcept {
#if LOWALLOC_COUNT_LIVE_BYTES && defined(__APPLE__)
  return static_cast<std::ptrdiff_t>(malloc_size(p));
#elif LOWALLOC_COUNT_LIVE_BYTES
  return static_cast<std::ptrdiff_t>(malloc_usable_size(p));
#else
  (void)p;
  return 0;
#endif
}

// `p` is the block just allocated for a request of `bytes`.
inline void count_allocation(std::size_t bytes, void* p) noexcept {
  ++totals.allocations;
  totals.bytes += bytes;
  totals.live_bytes += usable_size(p);
  if (totals.live_bytes > totals.peak_live_bytes) totals.peak_live_bytes = totals.live_bytes;
}
// `usable` is the freed block's usable_size(), read before it was freed.
inline void count_deallocation(std::ptrdiff_t usable) noexcept {
  ++totals.deallocations;
  totals.live_bytes -= usable;
}

// The uncounted allocator underneath.
inline void* raw_malloc(std::size_t n) noexcept {
#if LOWALLOC_COUNT_MALLOC
  return __libc_malloc(n);
#else
  return std::malloc(n);
#endif
}
inline void raw_free(void* p) noexcept {
#if LOWALLOC_COUNT_MALLOC
  __libc_free(p);
#else
  std::free(p);
#endif
}
inline void* raw_aligned(std::size_t align, std::size_t n) noexcept {
#if LOWALLOC_COUNT_MALLOC
  return __libc_memalign(align, n);
#else
  void* p = nullptr;
  if (align < sizeof(void*)) align = sizeof(void*);
  return posix_memalign(&p, align, n) == 0 ? p : nullptr;
#endif
}

// operator new: retry through the new_handler; when there is none, throw std::bad_alloc (or, for
// the nothrow forms, return null without throwing: a throw would itself allocate and be counted).
void* counted_new(std::size_t n, std::size_t align, bool nothrow) {
  if (n == 0) n = 1;
  for (;;) {
    void* p = align <= alignof(std::max_align_t) ? raw_malloc(n) : raw_aligned(align, n);
    if (p != nullptr) {
      count_allocation(n, p);
      return p;
    }
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) {
      if (nothrow) return nullptr;
      throw std::bad_alloc();
    }
    if (!nothrow) {
      handler();
      continue;
    }
    try {
      handler();
    } catch (...) {
      return nullptr;
    }
  }
}
void* counted_new(std::size_t n) { return counted_new(n, 0, false); }
void* counted_new(std::size_t n, std::align_val_t al) {
  return counted_new(n, static_cast<std::size_t>(al), false);
}
void* counted_new_nothrow(std::size_t n) noexcept { return counted_new(n, 0, true); }
void* counted_new_nothrow(std::size_t n, std::align_val_t al) noexcept {
  return counted_new(n, static_cast<std::size_t>(al), true);
}
void counted_delete(void* p) noexcept {
  if (p == nullptr) return;
  count_deallocation(usable_size(p));
  raw_free(p);
}

}  // namespace

namespace lowalloc {

alloc_totals thread_alloc_totals() noexcept { return totals; }

std::ptrdiff_t exchange_thread_peak(std::ptrdiff_t peak) noexcept {
  const std::ptrdiff_t old = totals.peak_live_bytes;
  totals.peak_live_bytes = peak;
  return old;
}

bool malloc_counted() noexcept { return LOWALLOC_COUNT_MALLOC != 0; }

bool live_bytes_counted() noexcept { return LOWALLOC_COUNT_LIVE_BYTES != 0; }

namespace detail {
// Referenced by <lowalloc/benchmark.hpp>: a program that forgot to link lowalloc::alloc_count
// fails to link with this name in the error.
void benchmark_memory_manager_needs_lowalloc_alloc_count() noexcept {}
}  // namespace detail

}  // namespace lowalloc

// ---- global operator new / delete, every replaceable form --------------------------------------
void* operator new(std::size_t n) { return counted_new(n); }
void* operator new[](std::size_t n) { return counted_new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_new_nothrow(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return counted_new_nothrow(n);
}
void* operator new(std::size_t n, std::align_val_t al) { return counted_new(n, al); }
void* operator new[](std::size_t n, std::align_val_t al) { return counted_new(n, al); }
void* operator new(std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  return counted_new_nothrow(n, al);
}
void* operator new[](std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  return counted_new_nothrow(n, al);
}

void operator delete(void* p) noexcept { counted_delete(p); }
void operator delete[](void* p) noexcept { counted_delete(p); }
void operator delete(void* p, std::size_t) noexcept { counted_delete(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_delete(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_delete(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_delete(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_delete(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_delete(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { counted_delete(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { counted_delete(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  counted_delete(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  counted_delete(p);
}

// ---- the malloc family (glibc, no sanitizer) ---------------------------------------------------
#if LOWALLOC_COUNT_MALLOC
extern "C" {

void* malloc(std::size_t n) noexcept {
  void* p = __libc_malloc(n);
  if (p != nullptr) count_allocation(n, p);
  return p;
}

void free(void* p) noexcept { counted_delete(p); }

void* calloc(std::size_t count, std::size_t size) noexcept {
  void* p = __libc_calloc(count, size);
  if (p != nullptr) count_allocation(count * size, p);  // no overflow: calloc checked it
  return p;
}

// realloc(p, n) with p and n non-zero is one allocation of n and one free of p (also when the
// block grows in place: the program asked for a new block); realloc(NULL, n) is a malloc;
// realloc(p, 0) frees p (glibc) and returns NULL.
// The old block's usable size is read first: after the call it may be gone. Its release is counted
// before the new block, so the peak does not count a block that grew in place twice.
void* realloc(void* p, std::size_t n) noexcept {
  const std::ptrdiff_t old = p != nullptr ? usable_size(p) : 0;
  void* q = __libc_realloc(p, n);
  if (p == nullptr) {
    if (q != nullptr) count_allocation(n, q);
  } else if (n == 0) {
    count_deallocation(old);
    if (q != nullptr) count_allocation(0, q);
  } else if (q != nullptr) {
    count_deallocation(old);
    count_allocation(n, q);
  }
  return q;
}

void* reallocarray(void* p, std::size_t count, std::size_t size) noexcept {
  std::size_t n = 0;
  if (__builtin_mul_overflow(count, size, &n)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(p, n);
}

static void* counted_memalign(std::size_t align, std::size_t n) {
  void* p = __libc_memalign(align, n);
  if (p != nullptr) count_allocation(n, p);
  return p;
}

void* memalign(std::size_t align, std::size_t n) noexcept { return counted_memalign(align, n); }

void* aligned_alloc(std::size_t align, std::size_t n) noexcept {
  // C17: any power of two is a valid alignment; glibc's memalign rounds smaller ones up.
  if (align == 0 || (align & (align - 1)) != 0) {
    errno = EINVAL;
    return nullptr;
  }
  return counted_memalign(align, n);
}

int posix_memalign(void** out, std::size_t align, std::size_t n) noexcept {
  if (align < sizeof(void*) || (align & (align - 1)) != 0) return EINVAL;
  void* p = counted_memalign(align, n);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(std::size_t n) noexcept {
  void* p = __libc_valloc(n);
  if (p != nullptr) count_allocation(n, p);
  return p;
}

void* pvalloc(std::size_t n) noexcept {
  void* p = __libc_pvalloc(n);
  if (p != nullptr) count_allocation(n, p);
  return p;
}

}  // extern "C"
#endif  // LOWALLOC_COUNT_MALLOC
