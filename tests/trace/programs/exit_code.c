/* K x (malloc 16, free), then exit status 42. */
#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  for (long i = 0; i < k; ++i) {
    void* p = malloc(16);
    escape(p);
    free(p);
  }
  return 42;
}
