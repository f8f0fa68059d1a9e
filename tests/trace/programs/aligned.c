/* K x (posix_memalign 64/100, aligned_alloc 128/256, memalign 32/50, valloc 10, pvalloc 10),
   each freed at once, plus a posix_memalign with an invalid alignment that fails. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>

#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  volatile size_t bad_alignment = 24; /* not a power of two: EINVAL */
  for (long i = 0; i < k; ++i) {
    void* p = NULL;
    if (posix_memalign(&p, 64, 100) != 0) return 1;
    escape(p);
    free(p);
    void* failed = NULL;
    if (posix_memalign(&failed, bad_alignment, 100) == 0) return 1;
    p = aligned_alloc(128, 256);
    escape(p);
    free(p);
    p = memalign(32, 50);
    escape(p);
    free(p);
    p = valloc(10);
    escape(p);
    free(p);
    p = pvalloc(10);
    escape(p);
    free(p);
  }
  return 0;
}
