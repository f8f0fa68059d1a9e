/* N threads at once (argv[2], 4 by default, at most 64), each K x (malloc 64, free) and K x malloc
   8 kept until the thread ends, all joined before exit. */
#include <pthread.h>

#include "common.h"

enum { max_threads = 64 };

static long k;
static pthread_barrier_t start;

static void* work(void* arg) {
  (void)arg;
  pthread_barrier_wait(&start);
  void** kept = malloc((size_t)k * sizeof(void*) + 1); /* one more allocation per thread */
  escape(kept);
  for (long i = 0; i < k; ++i) {
    void* p = malloc(64);
    escape(p);
    free(p);
    kept[i] = malloc(8);
    escape(kept[i]);
  }
  for (long i = 0; i < k; ++i) free(kept[i]);
  free(kept);
  return NULL;
}

int main(int argc, char** argv) {
  k = iterations(argc, argv);
  int thread_count = argc > 2 ? atoi(argv[2]) : 4;
  if (thread_count < 1 || thread_count > max_threads) return 2;
  pthread_t threads[max_threads];
  pthread_barrier_init(&start, NULL, (unsigned)thread_count);
  for (int i = 0; i < thread_count; ++i)
    if (pthread_create(&threads[i], NULL, work, NULL) != 0) return 1;
  for (int i = 0; i < thread_count; ++i) pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&start);
  return 0;
}
