/* A program with setenv and unsetenv of its own, exported (-rdynamic), as bash has for its shell
   variables: they do not change the environment. Prints how many times they were called before
   main and which of the recorder's variables (LD_PRELOAD, LOWALLOC_TRACE_*) its environment
   still has; then K x (malloc 40, free) and, given a program, execs it. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

extern char** environ;

static int calls;

int setenv(const char* name, const char* value, int overwrite) {
  (void)name;
  (void)value;
  (void)overwrite;
  ++calls;
  return 0;
}

int unsetenv(const char* name) {
  (void)name;
  ++calls;
  return 0;
}

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  printf("calls before main: %d\n", calls);
  for (char** e = environ; *e != NULL; ++e)
    if (strncmp(*e, "LD_PRELOAD=", 11) == 0 || strncmp(*e, "LOWALLOC_TRACE_", 15) == 0)
      printf("kept: %s\n", *e);
  fflush(stdout);
  for (long i = 0; i < k; ++i) {
    void* p = malloc(40);
    escape(p);
    free(p);
  }
  if (argc > 2) execv(argv[2], argv + 2);
  return 0;
}
