// Corpus program for scripts/bench-tracer.py --corpus: 2^BITS x 4 distinct call stacks. For each
// i < 2^BITS a chain of BITS noinline calls goes through left() or right() by the bits of i, so
// each i has its own stack; at the bottom, leaf() allocates from 4 call sites, then frees.
// A tracer that interns stacks sees 4 x 2^BITS of them, each allocated from once.
//
// Usage: distinct_stacks [BITS=18]
#include <cstdio>
#include <cstdlib>

namespace {

__attribute__((noinline)) void keep(void* p) { asm volatile("" : : "r"(p) : "memory"); }

// Counted apart, so that the compiler does not fold left() and right() into one function.
unsigned long lefts, rights;

__attribute__((noinline)) void leaf(unsigned i) {
  void* a = std::malloc(16 + i % 64);
  keep(a);
  void* b = std::malloc(80 + i % 64);
  keep(b);
  void* c = std::malloc(144 + i % 64);
  keep(c);
  void* d = std::malloc(208 + i % 64);
  keep(d);
  std::free(a);
  std::free(b);
  std::free(c);
  std::free(d);
}

__attribute__((noinline)) void right(unsigned i, int bit);

__attribute__((noinline)) void left(unsigned i, int bit) {
  ++lefts;
  if (bit < 0)
    leaf(i);
  else if (i >> bit & 1)
    right(i, bit - 1);
  else
    left(i, bit - 1);
  asm volatile("" : : : "memory");  // not a tail call: the frame stays on the stack
}

__attribute__((noinline)) void right(unsigned i, int bit) {
  ++rights;
  if (bit < 0)
    leaf(i);
  else if (i >> bit & 1)
    right(i, bit - 1);
  else
    left(i, bit - 1);
  asm volatile("" : : : "memory");
}

}  // namespace

int main(int argc, char** argv) {
  int bits = argc > 1 ? std::atoi(argv[1]) : 18;
  if (bits < 1 || bits > 24) {
    std::fprintf(stderr, "usage: distinct_stacks [BITS (1..24)]\n");
    return 64;
  }
  for (unsigned i = 0; i < 1u << bits; ++i) left(i, bits - 1);
  std::printf("%u stacks x 4 sites, %lu left and %lu right calls\n", 1u << bits, lefts, rights);
  return 0;
}
