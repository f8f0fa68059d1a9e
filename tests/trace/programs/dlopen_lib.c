/* Loaded by dlopen_main with dlopen: n x (malloc 72, free) from inside this library. */
#include <stdlib.h>

__attribute__((visibility("default"))) void lowalloc_test_allocate(long n);

__attribute__((visibility("default"), noinline)) void lowalloc_test_allocate(long n) {
  for (long i = 0; i < n; ++i) {
    void* p = malloc(72);
    __asm__ volatile("" : : "r"(p) : "memory");
    free(p);
  }
}
