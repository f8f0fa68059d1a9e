/* K x (realloc(NULL, 40), realloc(p, 0), malloc 8, free(NULL), free): realloc(NULL, n) is an
   allocation, realloc(p, 0) frees p (glibc returns NULL), free(NULL) counts nothing. */
#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  void* volatile null_pointer = NULL;
  for (long i = 0; i < k; ++i) {
    void* p = realloc(null_pointer, 40);
    escape(p);
    p = realloc(p, 0);
    escape(p); /* NULL */
    void* q = malloc(8);
    escape(q);
    free(null_pointer);
    free(q);
  }
  return 0;
}
