/* K x (malloc 16, realloc 32, realloc 64, realloc 128, free). */
#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  for (long i = 0; i < k; ++i) {
    char* p = malloc(16);
    escape(p);
    p = realloc(p, 32);
    escape(p);
    p = realloc(p, 64);
    escape(p);
    p = realloc(p, 128);
    escape(p);
    free(p);
  }
  return 0;
}
