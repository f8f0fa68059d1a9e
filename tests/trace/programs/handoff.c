/* K round trips between two threads: the main thread allocates a block and hands it over; the
   other thread frees it, allocates one of the same size (glibc's per-thread cache gives it the
   same address back) and hands that back; the main thread frees it. The recorder must not take
   the main thread's free for one of its own earlier allocation at that address. */
#include "common.h"

#include <pthread.h>
#include <semaphore.h>

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

int main(int argc, char** argv) {
  rounds = iterations(argc, argv);
  sem_init(&to_other, 0, 0);
  sem_init(&to_main, 0, 0);
  pthread_t thread;
  if (pthread_create(&thread, NULL, other, NULL) != 0) return 1;
  for (long i = 0; i < rounds; ++i) {
    void* p = malloc(40);
    escape(p);
    slot = p;
    sem_post(&to_other);
    sem_wait(&to_main);
    free(slot);
  }
  pthread_join(thread, NULL);
  return 0;
}
