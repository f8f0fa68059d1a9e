/* Shared by the traced test programs: the iteration count and an escape that keeps the
   compiler from removing an allocation whose result is otherwise unused. */
#ifndef LOWALLOC_TESTS_TRACE_PROGRAMS_COMMON_H
#define LOWALLOC_TESTS_TRACE_PROGRAMS_COMMON_H

#include <stdlib.h>

/* The pointer escapes into memory the compiler cannot see, so malloc/free pairs stay. */
static inline void escape(void* p) { __asm__ volatile("" : : "r"(p) : "memory"); }

/* n x (malloc(size), free): each block freed before the next is made. */
static inline void malloc_free_pairs(long n, size_t size) {
  for (long i = 0; i < n; ++i) {
    void* p = malloc(size);
    escape(p);
    free(p);
  }
}

/* n blocks of `size` bytes, in an array of their own (NULL when n is 0): n + 1 allocations. */
static inline void** malloc_blocks(long n, size_t size) {
  void** blocks = n > 0 ? (void**)malloc((size_t)n * sizeof(void*)) : NULL;
  for (long i = 0; i < n; ++i) {
    blocks[i] = malloc(size);
    escape(blocks[i]);
  }
  return blocks;
}

/* argv[1]: the iteration count K (0 if absent). */
static inline long iterations(int argc, char** argv) {
  return argc > 1 ? strtol(argv[1], NULL, 10) : 0;
}

#endif
