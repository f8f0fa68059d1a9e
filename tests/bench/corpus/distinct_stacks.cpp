// Corpus program for scripts/bench-tracer.py --corpus: 2^BITS x 4 distinct call stacks. For each
// i < 2^BITS a chain of BITS noinline calls goes through left() or right() by the bits of i, so
// each i has its own stack; at the bottom, leaf() allocates from 4 call sites, then frees.
// A tracer that interns stacks sees 4 x 2^BITS of them, each allocated from once. With THREADS,
// that many threads at once each make all of them: the same stacks in every thread, which a
// tracer stores once per process or once per thread.
//
// Usage: distinct_stacks [BITS=18] [THREADS]
#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace {

__attribute__((noinline)) void keep(void* p) { asm volatile("" : : "r"(p) : "memory"); }

// Counted apart, so that the compiler does not fold left() and right() into one function; per
// thread, added up when it is done.
thread_local unsigned long lefts, rights;
std::atomic<unsigned long> all_lefts, all_rights;

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

int bits = 18;

void* walk_all(void*) {
  for (unsigned i = 0; i < 1u << bits; ++i) left(i, bits - 1);
  all_lefts += lefts;
  all_rights += rights;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  bits = argc > 1 ? std::atoi(argv[1]) : 18;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 0;
  if (bits < 1 || bits > 24 || threads < 0 || threads > 64) {
    std::fprintf(stderr, "usage: distinct_stacks [BITS (1..24)] [THREADS (1..64)]\n");
    return 64;
  }
  if (threads == 0) {
    walk_all(nullptr);
  } else {
    pthread_t t[64];
    for (int k = 0; k < threads; ++k)
      if (pthread_create(&t[k], nullptr, walk_all, nullptr) != 0) return 1;
    for (int k = 0; k < threads; ++k) pthread_join(t[k], nullptr);
  }
  std::printf("%u stacks x 4 sites, %lu left and %lu right calls\n", 1u << bits, all_lefts.load(),
              all_rights.load());
  return 0;
}
