/* The main thread leaves by pthread_exit while another thread runs on: glibc ends the process
   when its last thread exits, calling exit there. Main makes K blocks of 40 bytes, which an
   atexit handler frees (it runs in the last thread), starts a thread that makes K x (malloc 24,
   free), and calls pthread_exit; with argument "main-last", main first waits for the thread to
   end (detached: it cannot be joined), so that main is the last thread. 2K allocations, all
   freed, K temporary. The recorder's writer thread must not keep the process alive. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "common.h"

static void** blocks;
static long count;
static atomic_int worker_done;

static void free_blocks(void) {
  for (long i = 0; i < count; ++i) free(blocks[i]);
}

static void pause_ms(long ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

static void* work(void* arg) {
  (void)arg;
  pause_ms(20); /* main is gone by now, unless it waits */
  for (long i = 0; i < count; ++i) {
    void* p = malloc(24);
    escape(p);
    free(p);
  }
  atomic_store(&worker_done, 1);
  return NULL;
}

int main(int argc, char** argv) {
  count = iterations(argc, argv);
  int main_last = argc > 2 && strcmp(argv[2], "main-last") == 0;
  static void* storage[100000];
  if (count > 100000) return 1;
  blocks = storage;
  for (long i = 0; i < count; ++i) {
    blocks[i] = malloc(40);
    escape(blocks[i]);
  }
  atexit(free_blocks);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  if (pthread_create(&thread, &attr, work, NULL) != 0) return 1;
  pthread_attr_destroy(&attr);
  if (main_last) {
    while (!atomic_load(&worker_done)) pause_ms(1);
    pause_ms(20); /* past the thread's own exit */
  }
  pthread_exit(NULL);
}
