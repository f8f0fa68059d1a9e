/* The second unit of partial_aranges_main.c's program: the allocation. */
#include <stdlib.h>

void* unit_alloc(long n);

void* unit_alloc(long n) {
  return malloc(16 + (size_t)(n % 8));  // UNIT_ALLOC_LINE
}
