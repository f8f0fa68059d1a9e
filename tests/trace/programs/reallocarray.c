/* K x (reallocarray(NULL, 4, 10), reallocarray(p, 8, 10), free), plus one overflowing
   reallocarray per iteration that fails and counts nothing. */
#define _GNU_SOURCE
#include <stdint.h>

#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  volatile size_t huge = SIZE_MAX / 2;
  for (long i = 0; i < k; ++i) {
    void* p = reallocarray(NULL, 4, 10);
    escape(p);
    p = reallocarray(p, 8, 10);
    escape(p);
    void* failed = reallocarray(NULL, huge, 4);
    escape(failed);
    free(p);
  }
  return 0;
}
