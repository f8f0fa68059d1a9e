// Linked with own_allocator_lib, an allocator library (as a program linked with -ltcmalloc is):
// K x (malloc 24, free) and K x (new int[10], delete[]) reach the library through the recorder,
// which records them all: 2K allocations, all temporary. First a new[] too large to succeed: the
// library throws bad_alloc through the recorder's operator, which the program catches; nothing
// is recorded for it, and the thread records on.
#include <cstdint>
#include <cstdlib>
#include <new>

#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  volatile std::size_t too_large = SIZE_MAX / 4;
  try {
    escape(new char[too_large]);
    return 3;
  } catch (const std::bad_alloc&) {
  }
  malloc_free_pairs(k, 24);
  for (long i = 0; i < k; ++i) {
    int* p = new int[10];
    escape(p);
    delete[] p;
  }
  return 0;
}
