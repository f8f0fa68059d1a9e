/* K x (calloc 3 x 8, free), plus one calloc that overflows and fails per iteration. */
#include <stdint.h>

#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  volatile size_t huge = SIZE_MAX / 2;
  for (long i = 0; i < k; ++i) {
    void* p = calloc(3, 8);
    escape(p);
    free(p);
    void* failed = calloc(huge, 4); /* count * size overflows: NULL, not an allocation */
    escape(failed);
  }
  return 0;
}
