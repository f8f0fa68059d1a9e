/* A producer and a consumer: the main thread allocates K blocks, handing each to the other
   thread through one slot; the other thread frees each as it comes. Both run flat out, so the
   allocation and the free of a block, and the next allocation at the same address, mostly share
   one tick of the trace's clock: the reader must order them by what is live. (Each waits with
   sched_yield: on a busy machine with one free core the other thread still gets to run.) */
#include "common.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

static _Atomic(void*) slot;
static long rounds;

static void* consumer(void* arg) {
  (void)arg;
  for (long i = 0; i < rounds; ++i) {
    void* p;
    while ((p = atomic_exchange(&slot, NULL)) == NULL) sched_yield();
    free(p);
  }
  return NULL;
}

int main(int argc, char** argv) {
  rounds = iterations(argc, argv);
  pthread_t thread;
  if (pthread_create(&thread, NULL, consumer, NULL) != 0) return 1;
  for (long i = 0; i < rounds; ++i) {
    void* p = malloc(24);
    escape(p);
    while (atomic_load(&slot) != NULL) sched_yield();
    atomic_store(&slot, p);
  }
  pthread_join(thread, NULL);
  return 0;
}
