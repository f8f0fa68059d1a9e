/* A thread started before argv[2] is loaded: it allocates once; the main thread then loads the
   library with dlopen and hands the thread its lowalloc_test_allocate, which the thread calls
   (K x malloc 72, free, from inside the library). The thread's first stack in the library is
   written after the MODULE record of another thread, and the thread's event before it came
   before that record. */
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>

#include "common.h"

typedef void allocate_function(long);

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int allocated;               /* the thread made its allocation before the load */
static allocate_function* allocate; /* the library's function, once loaded */
static long k;

static void* worker(void* arg) {
  (void)arg;
  void* p = malloc(40);
  escape(p);
  free(p);
  pthread_mutex_lock(&mutex);
  allocated = 1;
  pthread_cond_broadcast(&changed);
  while (allocate == NULL) pthread_cond_wait(&changed, &mutex);
  allocate_function* f = allocate;
  pthread_mutex_unlock(&mutex);
  f(k);
  return NULL;
}

int main(int argc, char** argv) {
  k = iterations(argc, argv);
  if (argc < 3) return 2;
  pthread_t thread;
  if (pthread_create(&thread, NULL, worker, NULL) != 0) return 6;
  pthread_mutex_lock(&mutex);
  while (!allocated) pthread_cond_wait(&changed, &mutex);
  pthread_mutex_unlock(&mutex);
  /* Clock ticks (65 to 131 us each) between the thread's allocation and the load. */
  struct timespec pause = {0, 5000000};
  nanosleep(&pause, NULL);
  void* lib = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) return 3;
  allocate_function* f;
  *(void**)&f = dlsym(lib, "lowalloc_test_allocate");
  if (f == NULL) return 4;
  pthread_mutex_lock(&mutex);
  allocate = f;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&mutex);
  pthread_join(thread, NULL);
  return dlclose(lib) == 0 ? 0 : 5;
}
