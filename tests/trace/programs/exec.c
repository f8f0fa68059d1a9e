/* K x (malloc 50, free), then exec argv[2] with the arguments that follow it. */
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  if (argc < 3) return 2;
  for (long i = 0; i < k; ++i) {
    void* p = malloc(50);
    escape(p);
    free(p);
  }
  execv(argv[2], argv + 2);
  return 3;
}
