/* K x (malloc a 32, malloc b 48, free b, free a): b is temporary, a is not. */
#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  for (long i = 0; i < k; ++i) {
    void* a = malloc(32);
    escape(a);
    void* b = malloc(48);
    escape(b);
    free(b);
    free(a);
  }
  return 0;
}
