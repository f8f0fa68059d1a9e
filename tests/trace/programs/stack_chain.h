/* Distinct call stacks by the bits of a number, for the programs that make many of them
   (shared_stacks.c, many_stacks.c): chain(i, bits) goes down a chain of `bits` calls through
   left() or right() by the bits of i, and at its bottom leaf() makes one malloc(24), freed at
   once. Each i < 2^bits so allocates from a stack of its own. */
#ifndef LOWALLOC_TESTS_TRACE_PROGRAMS_STACK_CHAIN_H
#define LOWALLOC_TESTS_TRACE_PROGRAMS_STACK_CHAIN_H

#include "common.h"

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

/* Inline: its caller's frame is the chain's outermost, as if it called left() itself. */
static inline __attribute__((always_inline)) void chain(unsigned i, int bits) { left(i, bits - 1); }

#endif
