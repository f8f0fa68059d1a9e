/* A program linked with an allocator of its own, as one linked with tcmalloc or jemalloc is: it
   defines malloc, free, calloc and realloc (over glibc's own entry points), so the dynamic loader
   binds every call to them, libc's included, to these, before the preloaded recorder's.
   K x (malloc 24, free), none of which the recorder sees; then K x posix_memalign(64, 48), which
   it does hook, each block freed at the end by the program's own free, which it does not: K
   allocations recorded, K leaked. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

extern void* __libc_malloc(size_t);
extern void __libc_free(void*);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);

static long own_calls;

void* malloc(size_t n) {
  ++own_calls;
  return __libc_malloc(n);
}
void free(void* p) { __libc_free(p); }
void* calloc(size_t count, size_t n) {
  ++own_calls;
  return __libc_calloc(count, n);
}
void* realloc(void* p, size_t n) {
  ++own_calls;
  return __libc_realloc(p, n);
}

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  malloc_free_pairs(k, 24);
  void** kept = __libc_malloc(sizeof(void*) * (size_t)(k + 1));
  for (long i = 0; i < k; ++i)
    if (posix_memalign(&kept[i], 64, 48) != 0) return 1;
  for (long i = 0; i < k; ++i) free(kept[i]);
  __libc_free(kept);
  printf("%ld\n", own_calls);
  return own_calls >= k ? 0 : 2;
}
