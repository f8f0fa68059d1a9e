/* Rewrites its argv as setproctitle does (argv[1] = NULL), then forks from a thread that has not
   allocated; the child allocates and frees K blocks of 24 bytes and exits. */
#include "common.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

static long k;

static void* forker(void* arg) {
  (void)arg;
  pid_t pid = fork();
  if (pid == 0) {
    for (long i = 0; i < k; ++i) {
      void* p = malloc(24);
      escape(p);
      free(p);
    }
    exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return (void*)(long)(WIFEXITED(status) ? WEXITSTATUS(status) : 99);
}

int main(int argc, char** argv) {
  k = iterations(argc, argv);
  argv[1] = NULL;
  pthread_t thread;
  if (pthread_create(&thread, NULL, forker, NULL) != 0) return 1;
  void* result = NULL;
  pthread_join(thread, &result);
  return (int)(long)result;
}
