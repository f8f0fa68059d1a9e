/* K x (malloc 48, free), then the file named by argv[2] (the trace) removed, as a clean-up of a
   directory a test or a script ran in may do while the program runs, then K x (malloc 48, free)
   again. The recorder's descriptor still writes, to a file no name reaches: the events after the
   removal are lost, and lowalloc run must not say the trace was written. */
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  if (argc < 3) return 2;
  malloc_free_pairs(k, 48);
  if (unlink(argv[2]) != 0) return 3;
  malloc_free_pairs(k, 48);
  return 0;
}
