/* A producer and C consumers (argv[2], 3 if absent): the main thread allocates K blocks of 24, 32
   and 40 bytes in turn and puts each in a queue of 16 under a mutex; the consumers take them and
   free them, every fourth after a realloc to 64 bytes. All run flat out, so most of a tick's
   events are one block's allocation and its free in another thread, and the next allocation of
   its address: with two consumers or more, two frees of one address by two threads often share a
   tick, and only the order of each free within its tick tells which allocation it ended. */
#include "common.h"

#include <pthread.h>

enum { queue_size = 16 };

static void* queue[queue_size];
static int head, count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;

static void put(void* p) {
  pthread_mutex_lock(&lock);
  while (count == queue_size) pthread_cond_wait(&not_full, &lock);
  queue[(head + count++) % queue_size] = p;
  pthread_cond_signal(&not_empty);
  pthread_mutex_unlock(&lock);
}

static void* take(void) {
  pthread_mutex_lock(&lock);
  while (count == 0) pthread_cond_wait(&not_empty, &lock);
  void* p = queue[head];
  head = (head + 1) % queue_size;
  --count;
  pthread_cond_signal(&not_full);
  pthread_mutex_unlock(&lock);
  return p;
}

static void* consumer(void* arg) {
  (void)arg;
  for (;;) {
    long* p = take();
    if (p == NULL) return NULL;
    if (*p % 4 == 0) {
      p = realloc(p, 64);
      escape(p);
    }
    free(p);
  }
}

int main(int argc, char** argv) {
  long rounds = iterations(argc, argv);
  int consumers = argc > 2 ? atoi(argv[2]) : 3;
  pthread_t threads[16];
  if (consumers < 1 || consumers > 16) return 2;
  for (int c = 0; c < consumers; ++c)
    if (pthread_create(&threads[c], NULL, consumer, NULL) != 0) return 1;
  for (long i = 0; i < rounds; ++i) {
    long* p = malloc((size_t)(24 + 8 * (i % 3)));
    *p = i;
    put(p);
  }
  for (int c = 0; c < consumers; ++c) put(NULL);
  for (int c = 0; c < consumers; ++c) pthread_join(threads[c], NULL);
  return 0;
}
