// An allocator library, as libtcmalloc.so and libjemalloc.so are: it defines malloc and free, and
// operator new and delete, which do not call malloc. The preloaded recorder comes before all four
// (it defines the operators too), records the calls and passes them on here.
#include <cstddef>
#include <new>

extern "C" void* __libc_malloc(std::size_t);
extern "C" void __libc_free(void*);

extern "C" void* malloc(std::size_t n) { return __libc_malloc(n); }
extern "C" void free(void* p) { __libc_free(p); }

void* operator new(std::size_t n) {
  if (void* p = __libc_malloc(n != 0 ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = __libc_malloc(n != 0 ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete[](void* p) noexcept { __libc_free(p); }
void operator delete[](void* p, std::size_t) noexcept { __libc_free(p); }
void operator delete(void* p) noexcept { __libc_free(p); }
void operator delete(void* p, std::size_t) noexcept { __libc_free(p); }
