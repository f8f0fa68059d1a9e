/* K x (malloc 24, free): K allocations of 24 bytes, all temporary. */
#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  for (long i = 0; i < k; ++i) {
    void* p = malloc(24);
    escape(p);
    free(p);
  }
  return 0;
}
