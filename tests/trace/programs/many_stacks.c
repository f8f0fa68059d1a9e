/* One thread that allocates from 2^17 distinct call stacks, K times over (argv[1]): for
   i < 2^17 a chain of 17 calls through left() or right() by the bits of i, one malloc(24) freed
   at once at the bottom. The recorder's table of stacks grows from its first 1,024 slots to
   2^18; in every round after the first each stack is found in it again. */
#include "common.h"

enum { bits = 17 };

static __attribute__((noinline)) void leaf(void) {
  void* p = malloc(24);
  escape(p);
  free(p);
}

static __attribute__((noinline)) void right(unsigned i, int bit);

static __attribute__((noinline)) void left(unsigned i, int bit) {
  if (bit < 0)
    leaf();
  else if (i >> bit & 1)
    right(i, bit - 1);
  else
    left(i, bit - 1);
  __asm__ volatile("" : : : "memory"); /* not a tail call: the frame stays on the stack */
}

static __attribute__((noinline)) void right(unsigned i, int bit) {
  if (bit < 0)
    leaf();
  else if (i >> bit & 1)
    right(i, bit - 1);
  else
    left(i, bit - 1);
  __asm__ volatile("" : : : "memory");
}

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  for (long round = 0; round < k; ++round)
    for (unsigned i = 0; i < 1u << bits; ++i) left(i, bits - 1);
  return 0;
}
