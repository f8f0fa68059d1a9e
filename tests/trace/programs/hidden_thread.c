/* The main thread allocates K blocks of 40 bytes while it is the process's only thread, then
   starts another through glibc's own pthread_create, found in libc's scope, where the recorder's
   does not stand in for it: the recorder learns of the thread at its first allocation, and the
   main thread goes on keeping its blocks until its next block begins. Then the main thread
   reallocates the first K/2 to 80 bytes and frees all K. Each free must find its allocation. */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>

typedef int (*create_fn)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

static sem_t started, done;

static void* other(void* arg) {
  (void)arg;
  void* p = malloc(16); /* the recorder's first sight of this thread */
  escape(p);
  free(p);
  sem_post(&started);
  sem_wait(&done);
  return NULL;
}

int main(int argc, char** argv) {
  const long k = iterations(argc, argv);
  void** blocks = malloc_blocks(k, 40);
  sem_init(&started, 0, 0);
  sem_init(&done, 0, 0);
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  create_fn create = libc != NULL ? (create_fn)dlsym(libc, "pthread_create") : NULL;
  if (create == NULL) return 2;
  pthread_t thread;
  if (create(&thread, NULL, other, NULL) != 0) return 1;
  sem_wait(&started);
  for (long i = 0; i < k / 2; ++i) {
    blocks[i] = realloc(blocks[i], 80);
    escape(blocks[i]);
  }
  for (long i = 0; i < k; ++i) free(blocks[i]);
  free(blocks);
  sem_post(&done);
  pthread_join(thread, NULL);
  return 0;
}
