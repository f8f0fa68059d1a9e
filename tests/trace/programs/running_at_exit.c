/* A thread that is still running when the process exits: it makes K blocks of 32 bytes, keeps
   them, tells the main thread and waits forever; the main thread then returns from main. With
   K = 1000 its events fit in one block that the thread never flushes itself. With a second
   argument "busy", a second thread allocates and frees in a loop until the process is gone. With
   "killed", the main thread then makes K blocks of 64 bytes, keeps them, waits 2 seconds and
   raises SIGKILL: neither thread ends its block itself. */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static long k;
static sem_t made;

static void* keep_blocks(void* arg) {
  (void)arg;
  for (long i = 0; i < k; ++i) escape(malloc(32));
  sem_post(&made);
  for (;;) pause();
  return NULL;
}

static void* churn(void* arg) {
  (void)arg;
  sem_post(&made);
  for (;;) {
    void* p = malloc(48);
    escape(p);
    free(p);
  }
  return NULL;
}

int main(int argc, char** argv) {
  k = iterations(argc, argv);
  int busy = argc > 2 && strcmp(argv[2], "busy") == 0;
  sem_init(&made, 0, 0);
  pthread_t thread;
  if (pthread_create(&thread, NULL, keep_blocks, NULL) != 0) return 1;
  if (busy && pthread_create(&thread, NULL, churn, NULL) != 0) return 1;
  sem_wait(&made);
  if (busy) sem_wait(&made);
  if (argc > 2 && strcmp(argv[2], "killed") == 0) {
    for (long i = 0; i < k; ++i) escape(malloc(64));
    sleep(2);
    raise(SIGKILL);
  }
  return 0;
}
