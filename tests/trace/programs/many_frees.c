/* The main thread keeps 100 blocks of 40 bytes while another thread makes and frees K rounds of
   2,048 blocks of 24 bytes, each freed after its round's 2,048th allocation has ended the block
   they were made in: 2,048 K frees that name their address. Then the main thread makes 100 blocks
   of 56 bytes and frees all 200. With K = 600, more than 2^20 such frees go by between the main
   thread's allocations: its next block must begin anew. */
#include "common.h"

#include <pthread.h>

static long rounds;

static void* churn(void* arg) {
  (void)arg;
  static void* blocks[2048];
  for (long r = 0; r < rounds; ++r) {
    for (int i = 0; i < 2048; ++i) blocks[i] = malloc(24);
    for (int i = 0; i < 2048; ++i) free(blocks[i]);
  }
  return NULL;
}

int main(int argc, char** argv) {
  rounds = iterations(argc, argv);
  void* kept[100];
  void* more[100];
  for (int i = 0; i < 100; ++i) kept[i] = malloc(40);
  pthread_t thread;
  if (pthread_create(&thread, NULL, churn, NULL) != 0) return 1;
  pthread_join(thread, NULL);
  for (int i = 0; i < 100; ++i) more[i] = malloc(56);
  for (int i = 0; i < 100; ++i) {
    free(kept[i]);
    free(more[i]);
  }
  return 0;
}
