/* K allocations of varied sizes, all kept (argv[1]), then the end named by argv[2]:
     exit     returns 0 (the trace compresses badly: the write-failure test fills a file limit)
     segv     a write through NULL
     abort    abort()
     double_free  frees a block twice: the C library finds it and aborts inside free, while
              the recorder's hook is running
     handler  installs its own SIGSEGV handler, which prints "handled" and _exit(7)s, then
              writes through NULL
     thread   a second thread makes argv[3] allocations and waits; then the main thread writes
              through NULL */
#include "common.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static long thread_allocations = 0;
static int ready[2];

static void crash(void) {
  volatile int* volatile null_pointer = NULL;
  *null_pointer = 1;
}

static void on_segv(int sig) {
  (void)sig;
  static const char text[] = "handled\n";
  ssize_t ignored = write(1, text, sizeof text - 1);
  (void)ignored;
  _exit(7);
}

static void* other_thread(void* arg) {
  (void)arg;
  for (long i = 0; i < thread_allocations; ++i) escape(malloc(16));
  char byte = 1;
  ssize_t ignored = write(ready[1], &byte, 1);
  (void)ignored;
  for (;;) pause();
  return NULL;
}

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  const char* end = argc > 2 ? argv[2] : "exit";
  unsigned size = 12345;
  for (long i = 0; i < k; ++i) {
    size = size * 1103515245u + 12345u;
    escape(malloc(1 + (size >> 16) % 4096));
  }
  if (strcmp(end, "segv") == 0) crash();
  if (strcmp(end, "abort") == 0) abort();
  if (strcmp(end, "double_free") == 0) {
    void* p = malloc(24);
    escape(p);
    free(p);
    free(p);
  }
  if (strcmp(end, "handler") == 0) {
    signal(SIGSEGV, on_segv);
    crash();
  }
  if (strcmp(end, "thread") == 0) {
    thread_allocations = argc > 3 ? strtol(argv[3], NULL, 10) : 0;
    pthread_t t;
    if (pipe(ready) != 0 || pthread_create(&t, NULL, other_thread, NULL) != 0) return 1;
    char byte;
    if (read(ready[0], &byte, 1) != 1) return 1;
    crash();
  }
  return 0;
}
