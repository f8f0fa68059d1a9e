/* K round trips between two threads: the main thread allocates a block and hands it over; the
   other thread frees it, allocates one of the same size (glibc's per-thread cache gives it the
   same address back) and hands that back; the main thread frees it. The recorder must not take
   the main thread's free for one of its own earlier allocation at that address.

   With a second argument `early`, the main thread allocates K blocks of 40 bytes (and one of 24
   after them) while it is the process's only thread, before it starts the other: the first K/2
   make the round trip, and the main thread frees the other K/2 itself. The recorder, which reads
   no free counter while the process has one thread, must neither take the main thread's free of
   a returned block for one of its own allocation nor lose the frees of its own blocks. */
#include "common.h"

#include <pthread.h>
#include <semaphore.h>
#include <string.h>

static void* volatile slot;
static sem_t to_other, to_main;
static long rounds;

static void* other(void* arg) {
  (void)arg;
  for (long i = 0; i < rounds; ++i) {
    sem_wait(&to_other);
    free(slot);
    void* q = malloc(40);
    escape(q);
    slot = q;
    sem_post(&to_main);
  }
  return NULL;
}

/* Hands `p` to the other thread and frees what comes back. */
static void round_trip(void* p) {
  slot = p;
  sem_post(&to_other);
  sem_wait(&to_main);
  free(slot);
}

int main(int argc, char** argv) {
  const long k = iterations(argc, argv);
  const int early = argc > 2 && strcmp(argv[2], "early") == 0;
  void** blocks = NULL;
  void* last = NULL;
  if (early) {
    blocks = malloc_blocks(k, 40);
    last = malloc(24); /* after them: none of them is temporary */
    escape(last);
  }
  rounds = early ? k / 2 : k;
  sem_init(&to_other, 0, 0);
  sem_init(&to_main, 0, 0);
  pthread_t thread;
  if (pthread_create(&thread, NULL, other, NULL) != 0) return 1;
  for (long i = 0; i < rounds; ++i) {
    if (early) {
      round_trip(blocks[i]);
    } else {
      void* p = malloc(40);
      escape(p);
      round_trip(p);
    }
  }
  if (early) {
    for (long i = rounds; i < k; ++i) free(blocks[i]);
    free(last);
    free(blocks);
  }
  pthread_join(thread, NULL);
  return 0;
}
