// An executable with an allocator linked in (tcmalloc or jemalloc linked statically): it defines
// malloc and free, and operator new and delete, which do not call malloc. The dynamic loader binds
// every call to them to these definitions, ahead of the recorder's: K x (new of 40 bytes, delete),
// none recorded, and the trace names all four.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "common.h"

extern "C" void* __libc_malloc(std::size_t);
extern "C" void __libc_free(void*);

extern "C" void* malloc(std::size_t n) { return __libc_malloc(n); }
extern "C" void free(void* p) { __libc_free(p); }

static long news;

void* operator new(std::size_t n) {
  ++news;
  if (void* p = __libc_malloc(n != 0 ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { __libc_free(p); }
void operator delete(void* p, std::size_t) noexcept { __libc_free(p); }

struct forty {
  char bytes[40];
};

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  for (long i = 0; i < k; ++i) {
    forty* p = new forty;
    escape(p);
    delete p;
  }
  std::printf("%ld\n", news);
  return news >= k ? 0 : 1;
}
