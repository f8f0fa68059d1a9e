// Linked with own_allocator_lib, an allocator library: K x (malloc 24, free), which the recorder
// sees on their way to the library's malloc and free; K x (new int[10], delete[]), which go to the
// library's operator new and delete without calling malloc: not recorded.
#include <cstdlib>

#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  malloc_free_pairs(k, 24);
  for (long i = 0; i < k; ++i) {
    int* p = new int[10];
    escape(p);
    delete[] p;
  }
  return 0;
}
