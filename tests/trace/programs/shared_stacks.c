/* Threads that allocate from the same call stacks: W workers (argv[2], 4 by default, at most 64),
   started one after another (each joined before the next starts, or all at once with argv[3] =
   "together"), each making 2^BITS distinct stacks of the same calls: for i < 2^BITS a chain of
   BITS calls through left() or right() by the bits of i, one malloc(24) freed at once at the
   bottom, K times over (argv[1]). With argv[3] = "main-first" the main thread does the same
   first, before it starts the workers (its stacks are theirs where the tracer keeps only the
   innermost 10 frames: the malloc in leaf(), the 8 calls of the chain and the one in work()). */
#include <pthread.h>
#include <string.h>

#include "stack_chain.h"

enum { bits = 7, max_threads = 64 };

static long k;

static void* work(void* arg) {
  (void)arg;
  for (long round = 0; round < k; ++round)
    for (unsigned i = 0; i < 1u << bits; ++i) chain(i, bits);
  return NULL;
}

int main(int argc, char** argv) {
  k = iterations(argc, argv);
  int thread_count = argc > 2 ? atoi(argv[2]) : 4;
  int together = argc > 3 && strcmp(argv[3], "together") == 0;
  if (thread_count < 1 || thread_count > max_threads) return 2;
  if (argc > 3 && strcmp(argv[3], "main-first") == 0) work(NULL);
  pthread_t threads[max_threads];
  for (int i = 0; i < thread_count; ++i) {
    if (pthread_create(&threads[i], NULL, work, NULL) != 0) return 1;
    if (!together) pthread_join(threads[i], NULL);
  }
  if (together)
    for (int i = 0; i < thread_count; ++i) pthread_join(threads[i], NULL);
  return 0;
}
