/* A program of three units: main here, its allocation in partial_aranges_alloc.c and a function
   in partial_aranges_tail.c, linked in that order. modules_test lists only this unit and the
   last in the program's .debug_aranges, as a Go program built with cgo lists its C units there
   and not its Go units, which lie between them. argv[1]: K blocks made and freed. */
#include <stdlib.h>

void* unit_alloc(long n);
long unit_tail(long n);

int main(int argc, char** argv) {
  const long k = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
  for (long i = 0; i < k; ++i) free(unit_alloc(unit_tail(i)));
  return 0;
}
