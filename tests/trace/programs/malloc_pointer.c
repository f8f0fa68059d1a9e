/* Built without -fPIE, and takes the addresses of malloc and free, as python3 does: the executable
   exports both undefined, with the addresses of PLT entries that jump to the definitions found
   after it, the recorder's. Nothing is shadowed: K x (malloc 32, free) through the pointers, all
   recorded. */
#include <stdlib.h>

#include "common.h"

void* (*volatile allocate)(size_t) = malloc;
void (*volatile release)(void*) = free;

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  for (long i = 0; i < k; ++i) {
    void* p = allocate(32);
    escape(p);
    release(p);
  }
  return 0;
}
