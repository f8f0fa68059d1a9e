/* Where lowalloc's and heaptrack's definitions of "temporary" part. Per iteration:
   keep = malloc 16; t = malloc 24; free(keep); free(t)
     lowalloc: t is temporary (only a free of another block in between), keep is not;
     heaptrack: free(keep) resets its "last allocation", so neither is.
   Then, from one call site in a loop of 2, x0 = malloc 40; x1 = malloc 40; free(x0); free(x1)
     lowalloc: x1 is temporary;
     heaptrack: free(x0) matches the last allocation's (size, stack) record, so it counts x0. */
#include "common.h"

static __attribute__((noinline)) void* same_site(void) { return malloc(40); }

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  volatile int two = 2; /* a real loop: both calls return to one address */
  for (long i = 0; i < k; ++i) {
    void* keep = malloc(16);
    escape(keep);
    void* t = malloc(24);
    escape(t);
    free(keep);
    free(t);
    void* x[2];
    for (int j = 0; j < two; ++j) {
      x[j] = same_site();
      escape(x[j]);
    }
    free(x[0]);
    free(x[1]);
  }
  return 0;
}
