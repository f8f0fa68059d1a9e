/* 3K blocks that outlive the trace blocks they were made in (sizes 24, 40, 56, all live at
   once), then freed in a scrambled order: by the main thread, or with argument "thread" by a
   second thread started after they were made. While the process has one thread the recorder
   keeps them by ordinal and their frees name them so (no address in the trace); a thread start
   writes their addresses first, so that the other thread's frees match them. */
#include "common.h"

#include <pthread.h>
#include <string.h>

static void** blocks;
static long count;

static void* free_all(void* arg) {
  (void)arg;
  /* i * 7919 % count visits every block once: 7919 is a prime that divides no count used. */
  for (long i = 0; i < count; ++i) free(blocks[(i * 7919) % count]);
  return NULL;
}

int main(int argc, char** argv) {
  count = 3 * iterations(argc, argv);
  int in_thread = argc > 2 && strcmp(argv[2], "thread") == 0;
  static void* storage[3 * 100000];
  if (count > 3 * 100000) return 1;
  blocks = storage;
  for (long i = 0; i < count; ++i) {
    blocks[i] = malloc((size_t)(24 + 16 * (i % 3)));
    escape(blocks[i]);
  }
  if (!in_thread) {
    free_all(NULL);
    return 0;
  }
  pthread_t thread;
  if (pthread_create(&thread, NULL, free_all, NULL) != 0) return 1;
  pthread_join(thread, NULL);
  return 0;
}
