/* K x 1,000 blocks of sizes drawn at random, all kept, while the main thread is the process's only
   thread: events that compress poorly, in blocks that end at the block-local table's limit, each
   the next one's prefix where it lies (no writer thread yet). Then a second thread starts (and
   with it the recorder's writer thread), and the main thread goes on making and freeing
   K x 10,000 more, its blocks handed to the writer while it fills its other buffer. Then every
   kept block is freed. */
#include "common.h"

#include <pthread.h>

static unsigned long seed = 12345;
static size_t random_size(void) {
  seed = seed * 6364136223846793005ul + 1442695040888963407ul;
  return 16 + (size_t)(seed >> 33) % 2000;
}

static void* other(void* arg) {
  malloc_free_pairs((long)arg, 32);
  return NULL;
}

int main(int argc, char** argv) {
  const long k = iterations(argc, argv) * 1000;
  void** kept = k > 0 ? (void**)malloc((size_t)k * sizeof(void*)) : NULL;
  for (long i = 0; i < k; ++i) {
    kept[i] = malloc(random_size());
    escape(kept[i]);
  }
  pthread_t thread;
  if (pthread_create(&thread, NULL, other, (void*)1000) != 0) return 1;
  for (long i = 0; i < 10 * k; ++i) {
    void* p = malloc(random_size());
    escape(p);
    free(p);
  }
  pthread_join(thread, NULL);
  for (long i = 0; i < k; ++i) free(kept[i]);
  free(kept);
  return 0;
}
