/* K x (malloc 32, free), then raise(SIGKILL) (or a write through NULL if argv[2] is
   "segfault"): the trace has the blocks flushed before the end and no END record. */
#include <signal.h>
#include <string.h>

#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  for (long i = 0; i < k; ++i) {
    void* p = malloc(32);
    escape(p);
    free(p);
  }
  if (argc > 2 && strcmp(argv[2], "segfault") == 0) {
    volatile int* volatile null_pointer = NULL;
    *null_pointer = 1;
  }
  raise(SIGKILL);
  return 0;
}
