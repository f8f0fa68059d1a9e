/* K x (malloc 64, free), then prints how many threads the process has (/proc/self/task) alone and
   while a thread of its own runs: "1 2" untraced. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>

#include "common.h"

static pthread_barrier_t meet;

static int tasks(void) {
  DIR* d = opendir("/proc/self/task");
  if (d == NULL) return -1;
  int n = 0;
  for (struct dirent* e = readdir(d); e != NULL; e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

static void* work(void* arg) {
  (void)arg;
  pthread_barrier_wait(&meet);
  pthread_barrier_wait(&meet);
  return NULL;
}

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  for (long i = 0; i < k; ++i) {
    void* p = malloc(64);
    escape(p);
    free(p);
  }
  int alone = tasks();
  pthread_barrier_init(&meet, NULL, 2);
  pthread_t thread;
  if (pthread_create(&thread, NULL, work, NULL) != 0) return 1;
  pthread_barrier_wait(&meet);
  int with_thread = tasks();
  pthread_barrier_wait(&meet);
  pthread_join(thread, NULL);
  printf("%d %d\n", alone, with_thread);
  return 0;
}
